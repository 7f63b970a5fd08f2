/**
 * Get-or-create right after a killed owner's lease lapsed in the store, between processes with a real
 * redis-server. The owner (srv-dead) holds five Spots and is SIGKILLed; the test reads the store itself
 * until the owner's descriptor lease has passed there (its score in the node index, by Redis's own
 * clock), then two other servers get-or-create all five at one wall-clock instant. Their own view of
 * leases is read every 2 s (`fullReadIntervalMs`) and a read counts a listed lease live for
 * `ttlMs - marginMs` = 2.5 s after it, so a read always fell in the 2.5 s before the lapse and the
 * view still calls the dead owner live (unless a read came in the few ms between lapse and race); what
 * they cannot confirm (its link went with the process) they ask of the store with the takeover itself.
 * Per Spot: exactly one takeover (one `onActivate`, one `activated … tookOver` over both logs), one
 * ObjectGeneration larger than the dead one, and both creators answered with that same ref — never the
 * dead owner's.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { closeRedisClient } from '../../lib/store/redis/client.js';
import type { ChildApp } from '../helpers/child-app.js';
import { type ObjectRefOut, ObjectCluster, ask, lines, settle } from './object-nodes.js';

const SPOTS = Array.from({ length: 5 }, (_, i) => `lapse-${i}`);

/** Resolves once no lease of NodeRid `rid` is live in any descriptor index of the store (Redis's clock). */
async function leaseLapsed(cluster: ObjectCluster, rid: string, timeoutMs = 20000): Promise<number> {
  const redis = cluster.redis.client();
  const started = Date.now();
  try {
    for (;;) {
      const [seconds, micros] = (await redis.time()) as [string | number, string | number];
      const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      let live = false;
      for (const index of await redis.keys('*:i')) {
        if ((await redis.type(index)) !== 'zset') continue;
        const members = await redis.zrange(index, '0', '-1', 'WITHSCORES');
        for (let i = 0; i < members.length; i += 2)
          if ((members[i] as string).startsWith(`${rid}:`) && Number(members[i + 1]) > now) live = true;
      }
      if (!live) return Date.now() - started;
      if (Date.now() - started > timeoutMs)
        throw new Error(`the lease of '${rid}' is still live in the store`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await closeRedisClient(redis);
  }
}

describe('get-or-create right after a killed owner’s lease lapsed', () => {
  let cluster: ObjectCluster;
  let dead: ChildApp;
  let creators: ChildApp[] = [];

  beforeAll(async () => {
    cluster = await ObjectCluster.start('e2e-lapse');
    dead = await cluster.node('srv-dead', 'server');
    creators = await Promise.all(
      ['srv-a', 'srv-b'].map((rid) => cluster.node(rid, 'server', { fullReadIntervalMs: 2000 })),
    );
    await Promise.all([dead, ...creators].map((n) => ask(n, { type: 'waitPeers', count: 2 })));
  }, 60000);

  afterAll(() => cluster?.close());

  it('two creators racing: one takeover per Spot, one new generation, the same ref for both', async () => {
    const { refs } = await ask<{ refs: Record<string, ObjectRefOut> }>(dead, {
      type: 'create',
      ids: SPOTS,
      node: 'srv-dead',
    });
    for (const id of SPOTS) expect(refs[id]).toMatchObject({ id, rid: 'srv-dead' });
    // Both creators know the owner and its Spots: a get-or-create now answers with its ref.
    for (const c of creators) {
      const { result } = await ask<{ result: ObjectRefOut }>(c, { type: 'getOrCreate', id: SPOTS[0] });
      expect(result).toEqual(refs[SPOTS[0] as string]);
    }

    dead.kill('SIGKILL');
    await dead.exited;
    const waited = await leaseLapsed(cluster, 'srv-dead');
    // What each creator's own view says now (a read of the record only): a route to the dead owner
    // when the view is stale, as it nearly always is here.
    const views = await Promise.all(
      creators.map((c) => ask<{ tag: string; rid?: string }>(c, { type: 'resolve', id: SPOTS[0] })),
    );
    const stale = views.filter((v) => v.tag === 'ReadyRoute' && v.rid === 'srv-dead').length;
    const at = Date.now() + 20;
    const replies = await Promise.all(
      creators.flatMap((c) =>
        SPOTS.map((id) => ask<{ id: string; result: ObjectRefOut }>(c, { type: 'getOrCreate', id, at })),
      ),
    );
    console.log(
      `objects e2e takeover after lapse: lease gone in the store ${waited} ms after the kill was seen; ` +
        `${stale} of 2 creators' views still called the owner live; ` +
        `${replies.length} get-or-creates answered ${Date.now() - at} ms after the start`,
    );
    await settle(creators);
    for (const id of SPOTS) {
      const old = refs[id] as ObjectRefOut;
      const answers = replies.filter((r) => r.id === id).map((r) => r.result);
      expect(answers).toHaveLength(2);
      const taken = answers[0] as ObjectRefOut;
      expect(taken).toMatchObject({ id, kind: 'spot' });
      expect(['srv-a', 'srv-b']).toContain(taken.rid);
      expect(taken.objectGeneration).toBeGreaterThan(old.objectGeneration);
      expect(answers[1]).toEqual(taken);
      const activated = creators.flatMap((c) =>
        lines(c, 'object', id)
          .filter((m) => m.state === 'activated')
          .map((m) => ({ rid: c.name, gen: m.gen, reason: m.reason })),
      );
      expect(activated).toEqual([{ rid: taken.rid, gen: taken.objectGeneration, reason: 'tookOver' }]);
      // One onActivate ran for it over both processes.
      expect(creators.flatMap((c) => lines(c, 'activate', id).map(() => c.name))).toEqual([taken.rid]);
    }
  }, 60000);
});
