import { afterEach, describe, expect, it } from '@jest/globals';
import {
  MemoryLocationStore,
  MemoryRelocationStore,
  type ObjectClassDescription,
  type ZLinkObjectContext,
  type ZLinkObjectScope,
  ZLinkRuntime,
} from '../../../lib/index.js';
import type { ZLinkSessionContext } from '../../../lib/core/index.js';
import { ZLinkSessionClient } from '../../../lib/session-client/index.js';
import { Cleanup, EventCollector, waitFor } from '../../helpers/index.js';
import { objectClass, objectMeshOptions, registry, startRuntime } from '../spot/harness.js';
import { portOf } from './harness.js';

/**
 * A bound Actor moving between two object servers while its session's client keeps sending
 * (docs/protocol.md#bound-actors-that-move): the Session owner holds what it would relay while the binding is sealed,
 * the target gives it the new route once the Actor runs there, and every message is handled once, in
 * session order, with pushes arriving once and in order — the connection never moves. Real sockets,
 * in-memory stores, one process.
 */

/** Every handled message: which node ran it, for which session, and the session's own number for it. */
const handled: { node: string; n: number; session: string | undefined }[] = [];

class Player {
  count = 0;
  step(n: number, ctx: ZLinkObjectContext): { n: number; node: string } {
    this.count++;
    handled.push({ node: ctx.self.rid, n, session: ctx.session?.id });
    ctx.push('stepped', n);
    return { n, node: ctx.self.rid };
  }
  tap(n: number, ctx: ZLinkObjectContext): void {
    handled.push({ node: ctx.self.rid, n, session: ctx.session?.id });
  }
  capture(): unknown {
    return { count: this.count };
  }
  restore(state: { count: number }, _ctx: ZLinkObjectScope): void | Promise<void> {
    this.count = state.count;
  }
}

/** The test's gate on a target's `restore`: a move that takes as long as the test wants. */
let restoring: Promise<void> = Promise.resolve();

class SlowPlayer extends Player {
  override async restore(state: { count: number }, ctx: ZLinkObjectScope): Promise<void> {
    void super.restore(state, ctx);
    await restoring;
  }
}

const playerClass = (token: new () => Player = Player): ObjectClassDescription => ({
  ...objectClass('actor', 'player', token, {
    step: [{ method: 'step' }],
    tap: [{ method: 'tap', kind: 'send' }],
  }),
  options: { relocatable: true },
});

const cleanup = new Cleanup();
afterEach(async () => {
  handled.length = 0;
  await cleanup.closeAll();
});

async function world(sealTimeoutMs?: number, target: new () => Player = Player) {
  const store = new MemoryLocationStore();
  const relocationStore = { instance: new MemoryRelocationStore(), keyPrefix: 'moves' };
  const a = cleanup.add(
    await startRuntime(
      objectMeshOptions(store, 'server', 'server-a', { relocationStore }),
      registry(playerClass()),
    ),
  );
  const b = cleanup.add(
    await startRuntime(
      objectMeshOptions(store, 'server', 'server-b', { relocationStore }),
      registry(playerClass(target)),
    ),
  );
  const gateway = new ZLinkRuntime(
    objectMeshOptions(store, 'client', 'gateway', {
      sessions: {
        game: {
          mesh: 'objects',
          listen: { bindHost: '127.0.0.1' },
          ...(sealTimeoutMs && { sealTimeoutMs }),
        },
      },
    }),
  );
  gateway.sessions.registerHandler({
    listener: 'game',
    kind: 'request',
    packet: 'login',
    source: 'login',
    handler: async (payload, ctx) => {
      const ref = await gateway.objects.getOrCreateActor('player', payload as string, { node: 'server-a' });
      await (ctx as ZLinkSessionContext).session.bind(ref);
      return ref.rid;
    },
  });
  await gateway.start();
  cleanup.add(gateway);
  for (const r of [a, b, gateway]) await r.waitForPeers('objects', 2);
  return { a, b, gateway };
}

describe('a bound Actor relocating under its session', () => {
  it('moves 10 times while the client sends: each message handled once, in order, every push once', async () => {
    const { a, b, gateway } = await world();
    // A relay that reached the old owner would be followed from there: the route switch makes none.
    const followed: string[] = [];
    for (const r of [a, b])
      r.events.subscribe((e) => {
        if (e.type === 'object_relocation' && e.phase === 'followed') followed.push(e.packet ?? '');
      });
    const client = new ZLinkSessionClient({ host: '127.0.0.1', port: portOf(gateway) });
    cleanup.add({ close: () => client.close() });
    const pushes: number[] = [];
    client.on('push', (_p: string, n: number) => pushes.push(n));
    const { sessionId } = await client.connect();
    expect(await client.request('login', 'ada')).toBe('server-a');
    let n = 0;
    let sending = true;
    const replies: Promise<unknown>[] = [];
    const load = (async () => {
      while (sending) {
        replies.push(client.request('step', ++n));
        client.send('tap', ++n);
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    for (let move = 0; move < 10; move++) {
      const result = await gateway.objects.relocate(
        { kind: 'actor', id: 'ada' },
        { target: move % 2 === 0 ? 'server-b' : 'server-a' },
      );
      expect(result.outcome).toBe('committed');
      await new Promise((r) => setTimeout(r, 20));
    }
    sending = false;
    await load;
    const outcomes = await Promise.allSettled(replies);
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    await waitFor(
      () => handled.length === n,
      10000,
      () => `all ${n} messages handled (${handled.length})`,
    );
    expect(handled.map((h) => h.n)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(new Set(handled.map((h) => h.session))).toEqual(new Set([sessionId]));
    expect(new Set(handled.map((h) => h.node))).toEqual(new Set(['server-a', 'server-b']));
    expect(followed.filter((p) => p === 'step' || p === 'tap')).toEqual([]);
    await waitFor(() => pushes.length === n / 2, 5000, 'every push');
    expect(pushes).toEqual(Array.from({ length: n / 2 }, (_, i) => 2 * i + 1));
  });

  it('closes the session when the move gives no route within sealTimeoutMs; the other Actor kept its route', async () => {
    let release!: () => void;
    restoring = new Promise((r) => (release = r));
    const { gateway } = await world(150, SlowPlayer);
    const client = new ZLinkSessionClient({ host: '127.0.0.1', port: portOf(gateway) });
    cleanup.add({ close: () => client.close() });
    const closed = new Promise<{ reason: string }>((r) => client.once('close', r));
    await client.connect();
    await client.request('login', 'bea');
    await client.request('login', 'cid');
    const session = gateway.sessions.session(client.sessionId as string);
    expect(session?.actors).toEqual(['bea', 'cid']);
    // cid stays where it is: its binding is not sealed, its relays go straight on.
    expect(await session?.relay('step', 1, { actor: 'cid' })).toEqual({ n: 1, node: 'server-a' });
    const events = cleanup.add(new EventCollector(gateway.events));
    const move = gateway.objects.relocate({ kind: 'actor', id: 'bea' }, { target: 'server-b' });
    await events.next('session', (e) => e.state === 'sealed');
    const held = client.request('step', 2);
    expect(await session?.relay('step', 3, { actor: 'cid' })).toEqual({ n: 3, node: 'server-a' });
    expect((await closed).reason).toBe('relocationTimeout');
    await expect(held).rejects.toMatchObject({ code: 'Unavailable' });
    release();
    expect((await move).outcome).toBe('committed');
    expect(gateway.events.count('session:closed:relocationTimeout')).toBe(1);
  });
});
