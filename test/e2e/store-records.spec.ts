/**
 * What the stores leave in Redis (issue 51), on a real redis-server with object nodes in child
 * processes (lease ttl 3 s): a node killed with SIGKILL leaves its records, which
 * `nestjs-zlink records` lists as stale and removes (never a live writer's, nor one taken over after
 * it was listed), and once every node stopped gracefully no key is left without a TTL but the
 * Authority Store's version counter, kept on purpose (an ObjectGeneration is never reused;
 * docs/operations.md#records-in-redis).
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { ChildApp } from '../helpers/child-app.js';
import { openRecordsAudit } from '../../lib/store/index.js';
import { closeRedisClient } from '../../lib/store/redis/client.js';
import { ObjectCluster, ask } from './object-nodes.js';

const CLI = resolve(process.cwd(), '.fixtures-build/lib/runtime/cli.js');
const PREFIX = 'e2e-records';

interface Audited {
  kind: string;
  key: string;
  writers: string[];
  writerAlive?: boolean;
  ttlMs?: number;
  state: 'live' | 'stale' | 'kept';
}

/** Runs `nestjs-zlink records` on the suite's Redis and reads its `--json` report. */
async function records(url: string, ...extra: string[]): Promise<{ records: Audited[]; removed?: number }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      CLI,
      'records',
      '--redis',
      url,
      '--key-prefix',
      PREFIX,
      '--relocation-key-prefix',
      `${PREFIX}-moves`,
      '--json',
      ...extra,
    ],
    { timeout: 30000 },
  );
  return JSON.parse(stdout) as { records: Audited[]; removed?: number };
}

const writtenBy = (rid: string) => (r: Audited) => r.writers.some((w) => w.startsWith(`${rid}/`));

/** Every key of the suite's prefixes and its PTTL (-1: none). */
async function keysAndTtls(redis: Redis): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const match of [`${PREFIX}:*`, `${PREFIX}-moves:*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      for (const key of keys) out.set(key, await redis.pttl(key));
      cursor = next;
    } while (cursor !== '0');
  }
  return out;
}

describe('records the stores write to Redis', () => {
  let cluster: ObjectCluster;
  let redis: Redis;
  let servers: ChildApp[];
  let victim: ChildApp;
  let caller: ChildApp;

  beforeAll(async () => {
    cluster = await ObjectCluster.start(PREFIX);
    redis = new Redis(cluster.redis.url);
    [victim, ...servers] = await Promise.all(
      ['r-kill', 'r-a', 'r-b'].map((rid) => cluster.node(rid, 'server')),
    );
    caller = await cluster.node('r-caller', 'client');
    await Promise.all([caller, victim, ...servers].map((n) => ask(n, { type: 'waitPeers', count: 3 })));
    // Objects on every server (rooms, a relocatable Spot with member Actors) and one move of it.
    for (const rid of ['r-kill', 'r-a', 'r-b'])
      await ask(caller, { type: 'create', ids: [0, 1, 2].map((i) => `${rid}-room-${i}`), node: rid });
    await ask(caller, { type: 'create', spotType: 'mover', ids: ['mover', 'half-mover'], node: 'r-a' });
    await ask(caller, { type: 'create', actorType: 'member', ids: ['p-1', 'p-2'], node: 'r-b' });
    await ask(caller, { type: 'join', spot: 'mover', actors: ['p-1', 'p-2'] });
    const moved = await ask<{ moves: { outcome: string }[] }>(caller, {
      type: 'relocate',
      id: 'mover',
      target: 'r-b',
    });
    expect(moved.moves).toMatchObject([{ outcome: 'committed' }]);
    // A move whose target will be killed: its record still has a live writer (its source, r-a).
    const half = await ask<{ moves: { outcome: string }[] }>(caller, {
      type: 'relocate',
      id: 'half-mover',
      target: 'r-kill',
    });
    expect(half.moves).toMatchObject([{ outcome: 'committed' }]);
  }, 120000);

  afterAll(async () => {
    if (redis) await closeRedisClient(redis);
    await cluster?.close();
  });

  it("SIGKILL: the killed node's records are listed stale and removed; no live writer's record is touched", async () => {
    const before = await records(cluster.redis.url);
    const live = before.records.filter((r) => r.state === 'live');
    expect(before.records.filter((r) => r.state === 'stale')).toEqual([]);
    expect(
      live
        .filter(writtenBy('r-kill'))
        .map((r) => r.kind)
        .sort(),
    ).toEqual(expect.arrayContaining(['authority', 'descriptor', 'relocation']));

    victim.kill('SIGKILL');
    await victim.exited;
    // Its lease lapses (ttl 3 s): bounded polling of the command itself, the thing under test.
    const deadline = Date.now() + 20000;
    let listed = await records(cluster.redis.url);
    const itsAuthority = (list: Audited[]) =>
      list.filter((r) => r.kind === 'authority').filter(writtenBy('r-kill'));
    while (itsAuthority(listed.records).some((r) => r.state !== 'stale') && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 250));
      listed = await records(cluster.redis.url);
    }
    const stale = listed.records.filter((r) => r.state === 'stale');
    // Its three rooms and the Spot moved to it (and, until the others' reads drop it, its lease entry).
    const staleAuthority = stale.filter((r) => r.kind === 'authority').map((r) => r.key);
    expect(staleAuthority).toHaveLength(4);
    expect(stale.every(writtenBy('r-kill'))).toBe(true);
    for (const r of stale) expect(r.writerAlive).toBe(false);
    // The move to it keeps a live writer, its source: not stale.
    const halfMove = listed.records.find((r) => r.kind === 'relocation' && r.key.endsWith(':half-mover'));
    expect(halfMove).toMatchObject({
      state: 'live',
      writers: expect.arrayContaining([expect.stringMatching(/^r-kill\//)]),
    });

    // Taken over by a live server after it was listed stale: a removal of that listing leaves it.
    const audit = await openRecordsAudit(cluster.redis.url, PREFIX, `${PREFIX}-moves`);
    try {
      const listing = await audit.list();
      const taken = await ask<{ result: { rid?: string } }>(caller, {
        type: 'getOrCreate',
        id: 'r-kill-room-0',
      });
      expect(taken.result.rid).toMatch(/^r-[ab]$/);
      const roomKey = (await audit.list()).find((r) => r.key.endsWith(':r-kill-room-0'));
      expect(roomKey).toMatchObject({ state: 'live' });
      expect(await audit.removeStale(listing.filter((r) => r.key.endsWith(':r-kill-room-0')))).toBe(0);
      expect(await redis.exists(roomKey?.key ?? '')).toBe(1);
    } finally {
      await audit.close();
    }

    const liveBefore = (await records(cluster.redis.url)).records
      .filter((r) => r.state === 'live')
      .map((r) => r.key);
    const removal = await records(cluster.redis.url, '--remove-stale');
    // A lease entry may be dropped by a live node's read in between: at least the three records went.
    expect(removal.removed).toBeGreaterThanOrEqual(staleAuthority.length - 1);
    expect(removal.removed).toBeLessThanOrEqual(stale.length);
    const after = await records(cluster.redis.url);
    expect(after.records.filter((r) => r.state === 'stale')).toEqual([]);
    // Every live record is still there, and the live nodes still serve their objects.
    expect(after.records.filter((r) => r.state === 'live').map((r) => r.key)).toEqual(
      expect.arrayContaining(liveBefore),
    );
    for (const key of staleAuthority.filter((k) => !k.endsWith(':r-kill-room-0')))
      expect(await redis.exists(key)).toBe(0);
    const members = await ask<{ members: unknown }>(caller, { type: 'members', id: 'mover' });
    expect(members.members).toEqual(expect.arrayContaining(['p-1', 'p-2']));
  }, 60000);

  it('graceful stops: no key is left without a TTL but the Authority Store version counter of the mesh', async () => {
    for (const app of [...servers, caller]) {
      app.send({ type: 'close' });
      await app.next('closed', 60000);
      await app.exited;
    }
    const keys = await keysAndTtls(redis);
    const forever = [...keys].filter(([, ttl]) => ttl === -1).map(([key]) => key);
    expect(forever).toEqual([`${PREFIX}:{mesh-node:game}:authority:v`]);
    // The rest expires: descriptors and their index with the lease, relocation records within a day.
    expect(keys.size).toBeGreaterThan(forever.length);
    const report = await records(cluster.redis.url);
    expect(report.records.filter((r) => r.kind === 'authority')).toEqual([]);
  }, 120000);
});
