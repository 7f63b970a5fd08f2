import { afterEach, describe, expect, it } from '@jest/globals';
import {
  MemoryLocationStore,
  type ZLinkObjectContext,
  type ZLinkObjectScope,
  type ZLinkRuntime,
  type ZLinkSessionRef,
} from '../../../lib/index.js';
import type { ZLinkSessionContext } from '../../../lib/core/index.js';
import { ZLinkSessionClient } from '../../../lib/session-client/index.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { objectClass, objectMeshOptions, registry, startRuntime } from '../spot/harness.js';
import { portOf } from './harness.js';

/**
 * Sessions bound to Actors between two runtimes in one process (real sockets, an in-memory Location
 * Store): a gateway owning the sessions and an object server owning the Actors. The client's frames
 * reach the Actor as ordinary handler calls with the session in their context, the Actor pushes over
 * the stored route, and hears the session's end.
 */

class Player {
  static log: string[] = [];
  static closed: [string, string][] = [];
  /** Every `move` turn the handler ran, as `<id>@<objectGeneration>:<n>`: its own log. */
  static turns: string[] = [];
  moves: number[] = [];

  move(
    n: number,
    ctx: ZLinkObjectContext,
  ): { n: number; session: ZLinkSessionRef | undefined; bound: number } {
    this.moves.push(n);
    Player.turns.push(`${ctx.id}@${ctx.objectGeneration}:${n}`);
    ctx.push('moved', { n });
    return { n, session: ctx.session, bound: ctx.sessions.size };
  }

  /** Pushes a packet of the runtime's own: refused, so no handler can end its bindings by a push. */
  forge(_: unknown, ctx: ZLinkObjectContext): number {
    return ctx.push('zlink:binding-ended', null);
  }

  note(text: string, ctx: ZLinkObjectContext): void {
    Player.log.push(`${ctx.session?.id}:${text}`);
  }

  onSessionClosed(_ctx: ZLinkObjectScope, session: ZLinkSessionRef, reason: string): void {
    Player.closed.push([session.id, reason]);
  }
}

const players = () =>
  registry(
    objectClass('actor', 'player', Player, {
      move: [{ method: 'move' }],
      forge: [{ method: 'forge' }],
      note: [{ method: 'note', kind: 'send' }],
    }),
  );

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

async function pair(): Promise<{ gateway: ZLinkRuntime; server: ZLinkRuntime }> {
  const store = new MemoryLocationStore();
  const server = cleanup.add(await startRuntime(objectMeshOptions(store, 'server', 'objects-a'), players()));
  const gatewayOptions = objectMeshOptions(store, 'client', 'gateway-a', {
    sessions: { game: { mesh: 'objects', listen: { bindHost: '127.0.0.1', port: 0 } } },
  });
  const gateway = new (server.constructor as typeof ZLinkRuntime)(gatewayOptions);
  gateway.sessions.registerHandler({
    listener: 'game',
    kind: 'request',
    packet: 'login',
    source: 'login',
    handler: async (payload, ctx) => {
      const { session } = ctx as ZLinkSessionContext;
      const ref = await gateway.objects.getOrCreateActor(
        'player',
        String((payload as { name: string }).name),
      );
      await session.bind(ref);
      return { bound: session.actors };
    },
  });
  await gateway.start();
  cleanup.add(gateway);
  await gateway.waitForPeers('objects', 1);
  await server.waitForPeers('objects', 1);
  return { gateway, server };
}

describe('sessions bound to Actors', () => {
  it('relays the frames no session handler takes to the bound Actor, and its pushes back', async () => {
    Player.log = [];
    Player.closed = [];
    const { gateway } = await pair();
    const client = new ZLinkSessionClient({ host: '127.0.0.1', port: portOf(gateway) });
    const pushes: unknown[] = [];
    client.on('push', (packet: string, msg: unknown) => pushes.push([packet, msg]));
    const { sessionId } = await client.connect();
    expect(await client.request('login', { name: 'ada' })).toEqual({ bound: ['ada'] });
    const replies = await Promise.all([1, 2, 3].map((n) => client.request('move', n)));
    expect(replies).toEqual(
      [1, 2, 3].map((n) => ({
        n,
        bound: 1,
        session: { id: sessionId, listener: 'game', ownerRid: 'gateway-a' },
      })),
    );
    client.send('note', 'hello');
    await waitFor(() => pushes.length === 3 && Player.log.length === 1, 5000, 'pushes and the note');
    expect(pushes).toEqual([1, 2, 3].map((n) => ['moved', { n }]));
    expect(Player.log).toEqual([`${sessionId}:hello`]);
    await client.close();
    await waitFor(() => Player.closed.length === 1, 5000, 'the Actor heard the end');
    expect(Player.closed).toEqual([[sessionId, 'normal']]);
  });

  it('refuses a bind of another incarnation, and relays nothing without a binding', async () => {
    const { gateway } = await pair();
    const ref = await gateway.objects.createActor('player', 'bea');
    await gateway.objects.destroy(ref);
    const fresh = await gateway.objects.createActor('player', 'bea');
    const client = new ZLinkSessionClient({ host: '127.0.0.1', port: portOf(gateway) });
    cleanup.add({ close: () => client.close() });
    await client.connect();
    await expect(client.request('move', 1)).rejects.toMatchObject({ remote: { code: 'NoHandler' } });
    const session = gateway.sessions.session(client.sessionId as string);
    await expect(session?.bind(ref)).rejects.toMatchObject({ code: 'InvalidOperation' });
    await session?.bind(fresh);
    expect(await client.request('move', 7)).toMatchObject({ n: 7 });
  });

  it('ends a binding with its incarnation: a late relay is refused, and the new one runs no turn for it', async () => {
    Player.turns = [];
    Player.log = [];
    const { gateway } = await pair();
    const client = new ZLinkSessionClient({ host: '127.0.0.1', port: portOf(gateway) });
    cleanup.add({ close: () => client.close() });
    await client.connect();
    await client.request('login', { name: 'cid' });
    const old = await gateway.objects.getOrCreateActor('player', 'cid');
    expect(await client.request('move', 1)).toMatchObject({ n: 1, bound: 1 });

    // Destroyed and created again under the same id, on the same node (the only object server). The
    // owner tells the gateway, on the link its answer to the destroy takes after: it knows by then.
    await gateway.objects.destroy(old);
    expect(gateway.events.counts.get('session:unbound:bindingEnded')).toBe(1);
    const fresh = await gateway.objects.createActor('player', 'cid');
    expect(fresh.rid).toBe(old.rid);
    expect(fresh.objectGeneration).toBeGreaterThan(old.objectGeneration);

    // A send, then requests, on the old binding: each ends on the gateway with the reason, and the
    // session stays open.
    client.send('note', 'late');
    for (const n of [2, 3]) {
      const late = await client.request('move', n).catch((error: unknown) => error);
      expect(late).toMatchObject({
        code: 'RemoteError',
        remote: { code: 'Unavailable', details: { reason: 'bindingEnded' } },
      });
      expect((late as Error).message).toContain("actor 'cid' was destroyed");
    }
    expect(gateway.events.counts.get('session:unbound:bindingEnded')).toBe(1);

    // The new incarnation ran no turn for the old binding; bound anew, it runs the session's frames.
    expect(Player.turns).toEqual([`cid@${old.objectGeneration}:1`]);
    expect(Player.log).toEqual([]);
    await gateway.sessions.session(client.sessionId as string)?.bind(fresh);
    expect(await client.request('move', 4)).toMatchObject({ n: 4, bound: 1 });
    expect(Player.turns).toEqual([`cid@${old.objectGeneration}:1`, `cid@${fresh.objectGeneration}:4`]);
  });

  it("refuses an Actor's push of a runtime packet: the binding stays, the client gets no such push", async () => {
    const { gateway } = await pair();
    const client = new ZLinkSessionClient({ host: '127.0.0.1', port: portOf(gateway) });
    cleanup.add({ close: () => client.close() });
    const pushes: string[] = [];
    client.on('push', (packet: string) => pushes.push(packet));
    await client.connect();
    await client.request('login', { name: 'dee' });
    const forged = await client.request('forge', 1).catch((error: unknown) => error);
    expect(forged).toMatchObject({ code: 'RemoteError', remote: { code: 'InvalidArgument' } });
    expect((forged as Error).message).toContain("'zlink:binding-ended'");
    // The binding is whole: the next frame runs, and the push that follows it is the only one.
    expect(await client.request('move', 1)).toMatchObject({ n: 1, bound: 1 });
    await waitFor(() => pushes.length === 1, 5000, "the move's push");
    expect(pushes).toEqual(['moved']);
    expect(gateway.events.counts.get('session:unbound:bindingEnded')).toBeUndefined();
  });
});
