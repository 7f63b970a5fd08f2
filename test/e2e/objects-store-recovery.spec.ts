/**
 * The positive route cache after a store outage, between processes with a real redis-server: a caller
 * has Spot X's route cached; Redis is stopped (SIGSTOP: connections stay open, commands wait
 * unanswered); the caller calls an uncached Spot Y with a 500 ms deadline (it ends `Unavailable`, and
 * its read goes on without it); Redis resumes 900 ms later. The first answer after that — Y's own
 * late read, the lease's refresh or discovery's read, whichever comes first — is the store's
 * recovery: the caller drops X's route (its `route` log line, reason `storeRecovered`, and its
 * `store` lines), and a call to X 300 ms later reads the authority again (Redis counts the HMGET that
 * only authority reads run).
 *
 * And the converse: a store that answered in time is not failing because the caller's own event loop
 * was held past a deadline (a synchronous burst of calls): its timers fire before it reads the answer
 * waiting in its socket, and that answer still counts as on time.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildApp } from '../helpers/child-app.js';
import { ObjectCluster, ask, calls, lines, settle } from './object-nodes.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('a cached route after the store stalled and came back', () => {
  let cluster: ObjectCluster;
  let server: ChildApp;
  let caller: ChildApp;

  beforeAll(async () => {
    cluster = await ObjectCluster.start('e2e-store-recovery');
    [server, caller] = await Promise.all([cluster.node('srv', 'server'), cluster.node('cli', 'client')]);
    await Promise.all([server, caller].map((n) => ask(n, { type: 'waitPeers', count: 1 })));
  }, 60000);

  afterAll(() => cluster?.close());

  it.each([1, 2, 3])(
    'round %i: the first answer after the outage drops the route, the next call reads the store',
    async (round) => {
      const [x, y] = [`x-${round}`, `y-${round}`];
      await ask(server, { type: 'create', ids: [x, y], node: 'srv' });
      // X's route is cached: a second call reads nothing.
      expect((await calls(caller, { targets: [x], tag: `warm-${round}` }))[0]?.outcome).toBe('ok');
      await cluster.redis.resetStats();
      expect((await calls(caller, { targets: [x], tag: `hit-${round}` }))[0]?.outcome).toBe('ok');
      expect(await cluster.redis.commandCalls('hmget')).toBe(0);

      const logged = caller.logs.length;
      cluster.redis.signal('SIGSTOP');
      let y1;
      try {
        [y1] = await calls(caller, { targets: [y], timeoutMs: 500, tag: `y-${round}` });
        await sleep(400);
      } finally {
        cluster.redis.signal('SIGCONT');
      }
      expect(y1?.outcome).toBe('Unavailable');
      await sleep(300);
      await settle([caller]);
      const since = caller.logs.slice(logged);
      expect(since.filter((m) => m.e === 'store').map((m) => m.state)).toEqual(['failing', 'recovered']);
      expect(since.filter((m) => m.e === 'route' && m.id === x).map((m) => m.reason)).toEqual([
        'storeRecovered',
      ]);

      await cluster.redis.resetStats();
      expect((await calls(caller, { targets: [x], tag: `after-${round}` }))[0]?.outcome).toBe('ok');
      expect(await cluster.redis.commandCalls('hmget')).toBe(1);
      // Every store line the caller wrote in all rounds pairs up: no recovery without a failure.
      expect(lines(caller, 'store').length % 2).toBe(0);
    },
    30000,
  );

  it('a caller whose loop is held past its deadlines finds the store answered in time: no outage, the route stays', async () => {
    const x = 'held-x';
    const zs = ['held-z0', 'held-z1', 'held-z2'];
    await ask(server, { type: 'create', ids: [x, ...zs], node: 'srv' });
    expect((await calls(caller, { targets: [x], tag: 'held-warm' }))[0]?.outcome).toBe('ok');
    const logged = caller.logs.length;
    for (const z of zs) {
      // Z's read (uncached) is sent, answered within a millisecond, and read by the caller only after
      // 700 ms, well past the call's 200 ms deadline; the lease's refresh timer (500 ms) is overdue
      // too. The call then races its own spent deadline (it may end ok or Timeout), but it never ends
      // Unavailable for a store that did not answer.
      const [zi] = await calls(caller, { targets: [z], timeoutMs: 200, busyMs: 700, tag: `held-${z}` });
      expect(['ok', 'Timeout']).toContain(zi?.outcome);
    }
    await settle([caller]);
    const since = caller.logs.slice(logged);
    expect(since.filter((m) => m.e === 'store')).toEqual([]);
    expect(since.filter((m) => m.e === 'route')).toEqual([]);
    // Every route read stays cached: X's from before, each Z's from its own late-read answer.
    await cluster.redis.resetStats();
    const after = await calls(caller, { targets: [x, ...zs], tag: 'held-after' });
    expect(after.map((r) => r.outcome)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(await cluster.redis.commandCalls('hmget')).toBe(0);
  }, 30000);
});
