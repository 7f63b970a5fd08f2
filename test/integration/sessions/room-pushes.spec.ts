import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryLocationStore, type ZLinkObjectContext, type ZLinkRuntime } from '../../../lib/index.js';
import type { ZLinkSessionContext } from '../../../lib/core/index.js';
import { ZLinkSessionClient } from '../../../lib/session-client/index.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { objectClass, objectMeshOptions, registry, startRuntime } from '../spot/harness.js';
import { portOf } from './harness.js';

/**
 * A Spot's push to the sessions bound to its members (docs/sessions.md#room-pushes), between a gateway
 * and an object server in one process (real sockets, an in-memory Location Store): one record per
 * gateway, each session once, in order with the members' own pushes, and a return value that says how
 * many sessions it was handed to.
 */

class Player {
  /** Resolved by the test: a `hold` turn waits for it. */
  static release: () => void = () => undefined;

  move(n: number, ctx: ZLinkObjectContext): number {
    ctx.push('moved', n);
    return n;
  }

  async hold(): Promise<void> {
    await new Promise<void>((resolve) => (Player.release = resolve));
  }
}

class Room {
  shout(n: number, ctx: ZLinkObjectContext): { sent: number; size: number } {
    return { sent: ctx.push('news', n), size: ctx.sessions.size };
  }

  forge(_: unknown, ctx: ZLinkObjectContext): number {
    return ctx.push('zlink:session-closed', null);
  }
}

const classes = () =>
  registry(
    objectClass('actor', 'player', Player, {
      move: [{ method: 'move' }],
      hold: [{ method: 'hold', kind: 'send' }],
    }),
    objectClass('spot', 'room', Room, { shout: [{ method: 'shout' }], forge: [{ method: 'forge' }] }),
  );

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

async function pair(): Promise<{ gateway: ZLinkRuntime; server: ZLinkRuntime }> {
  const store = new MemoryLocationStore();
  const server = cleanup.add(await startRuntime(objectMeshOptions(store, 'server', 'objects-a'), classes()));
  const gatewayOptions = objectMeshOptions(store, 'client', 'gateway-a', {
    sessions: { game: { mesh: 'objects', listen: { bindHost: '127.0.0.1', port: 0 } } },
  });
  const gateway = new (server.constructor as typeof ZLinkRuntime)(gatewayOptions);
  // `login` binds the session to each player named (creating it, and joining it to room `r1`).
  gateway.sessions.registerHandler({
    listener: 'game',
    kind: 'request',
    packet: 'login',
    source: 'login',
    handler: async (payload, ctx) => {
      const { session } = ctx as ZLinkSessionContext;
      for (const name of payload as string[]) {
        const ref = await gateway.objects.getOrCreateActor('player', name);
        await gateway.objects.join(ref, 'r1');
        await session.bind(ref);
      }
      return session.actors;
    },
  });
  await gateway.start();
  cleanup.add(gateway);
  await gateway.waitForPeers('objects', 1);
  await server.waitForPeers('objects', 1);
  await gateway.objects.getOrCreateSpot('room', 'r1');
  return { gateway, server };
}

async function player(
  gateway: ZLinkRuntime,
  names: string[],
): Promise<{ client: ZLinkSessionClient; pushes: string[] }> {
  const client = new ZLinkSessionClient({ host: '127.0.0.1', port: portOf(gateway) });
  cleanup.add({ close: () => client.close() });
  const pushes: string[] = [];
  client.on('push', (packet: string, msg: unknown) => pushes.push(`${packet} ${String(msg)}`));
  await client.connect();
  await client.request('login', names);
  return { client, pushes };
}

const shout = (gateway: ZLinkRuntime, n: number) =>
  gateway.routeClient.toSpot('r1').request('shout', n).async() as Promise<{ sent: number; size: number }>;

const roomRecords = (gateway: ZLinkRuntime): number | undefined =>
  gateway.snapshot().sessions?.find((s) => s.listener === 'game')?.roomPushRecords;

describe("a Spot's push to its members' sessions", () => {
  it('reaches every session once, in one record, in order with the members own pushes', async () => {
    const { gateway } = await pair();
    const ann = await player(gateway, ['ann']);
    const bob = await player(gateway, ['bob', 'cy']); // one session bound to two members: reached once
    const dee = await player(gateway, ['dee']);
    for (const n of [1, 2, 3]) {
      await ann.client.request('move', n);
      await bob.client.request('move', n);
      expect(await shout(gateway, n)).toEqual({ sent: 3, size: 3 });
    }
    await waitFor(
      () => ann.pushes.length === 6 && bob.pushes.length === 6 && dee.pushes.length === 3,
      5000,
      'pushes',
    );
    const expected = [1, 2, 3].flatMap((n) => [`moved ${n}`, `news ${n}`]);
    expect(ann.pushes).toEqual(expected);
    expect(bob.pushes).toEqual(expected);
    expect(dee.pushes).toEqual(['news 1', 'news 2', 'news 3']);
    // One record per push for the gateway, not one per member.
    expect(roomRecords(gateway)).toBe(3);
  });

  it('says 0 with no members, and with members bound to no session; no record leaves', async () => {
    const { gateway } = await pair();
    expect(await shout(gateway, 1)).toEqual({ sent: 0, size: 0 });
    await gateway.objects.join(await gateway.objects.getOrCreateActor('player', 'eve'), 'r1');
    await gateway.objects.join(await gateway.objects.getOrCreateActor('player', 'fay'), 'r1');
    expect(await shout(gateway, 2)).toEqual({ sent: 0, size: 0 });
    expect(roomRecords(gateway)).toBe(0);
  });

  it('a stale binding gets nothing: the gateway drops its copy, the others get theirs', async () => {
    const { gateway } = await pair();
    const gus = await player(gateway, ['gus']);
    const hal = await player(gateway, ['hal']);
    // gus's turns wait: its session closes, and the end reaches gus only after the room's push.
    gus.client.send('hold', null);
    await gus.client.close();
    await waitFor(() => gateway.snapshot().sessions?.[0]?.sessions === 1, 5000, 'the close on the gateway');
    const drops = gateway.events.counts.get('delivery:drop') ?? 0;
    expect(await shout(gateway, 1)).toEqual({ sent: 2, size: 2 });
    await waitFor(() => hal.pushes.length === 1, 5000, "hal's push");
    expect(hal.pushes).toEqual(['news 1']);
    await waitFor(() => (gateway.events.counts.get('delivery:drop') ?? 0) === drops + 1, 5000, 'the drop');
    Player.release();
    expect(gus.pushes).toEqual([]);
  });

  it("refuses the runtime's zlink: prefix on a Spot, members or not", async () => {
    const { gateway } = await pair();
    await player(gateway, ['ivy']);
    const forged = await gateway.routeClient
      .toSpot('r1')
      .request('forge', null)
      .async()
      .catch((e: unknown) => e);
    expect(forged).toMatchObject({ code: 'RemoteError', remote: { code: 'InvalidArgument' } });
    expect(roomRecords(gateway)).toBe(0);
  });
});
