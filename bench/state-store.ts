/**
 * What a write of durable state costs through one `RedisStateStore` (docs/decisions.md#the-redis-provider
 * has its figures): `--rows` objects adopted once, then every one written `--rounds` times with a state of
 * `--state-bytes`, in batches of each `--batches` size with each `--inflight` count of batches in flight.
 * Per run: writes per second, this process's CPU per write, and what Redis counted (`INFO`): its CPU per
 * write and `usec_per_call` of EVALSHA (the script alone, as Redis times it).
 *
 * A private `redis-server` without persistence unless `--redis URL` names another (one with `appendonly
 * yes` shows what an fsync policy costs). Its keys go under a fresh prefix.
 *
 * Usage (after `tsc -p tsconfig.bench.json`):
 *   node .bench-build/bench/state-store.js [--rows 4096] [--rounds 5] [--state-bytes 4096]
 *     [--batches 64,256] [--inflight 1,2] [--redis redis://127.0.0.1:6390] [--commands]
 */
import { Redis } from 'ioredis';
import type { StateWrite } from '../lib/core/index.js';
import { closeRedisClient } from '../lib/store/redis/client.js';
import { RedisStateStore } from '../lib/store/redis/redis-state-store.js';
import { type PrivateRedis, requirePrivateRedis } from '../sample/private-redis.js';
import { machineInfo } from './machine.js';
import { redisCounters, redisDelta } from './redis-info.js';

interface Args {
  readonly rows: number;
  readonly rounds: number;
  readonly stateBytes: number;
  readonly batches: readonly number[];
  readonly inflight: readonly number[];
  readonly redis: string | undefined;
  /** Also print Redis's own time per command, the commands the scripts run included. */
  readonly commands: boolean;
}

function parse(argv: string[]): Args {
  const flag = (name: string, fallback: string): string => {
    const at = argv.indexOf(name);
    return at >= 0 ? (argv[at + 1] as string) : fallback;
  };
  const list = (name: string, fallback: string) => flag(name, fallback).split(',').map(Number);
  const redis = flag('--redis', '');
  return {
    rows: Number(flag('--rows', '4096')),
    rounds: Number(flag('--rounds', '5')),
    stateBytes: Number(flag('--state-bytes', '4096')),
    batches: list('--batches', '64,256'),
    inflight: list('--inflight', '1,2'),
    redis: redis === '' ? undefined : redis,
    commands: argv.includes('--commands'),
  };
}

/** `usec_per_call` of EVALSHA since the last `CONFIG RESETSTAT`. */
async function evalshaUsecPerCall(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(/^cmdstat_evalsha:.*usec_per_call=([\d.]+)/m.exec(info)?.[1] ?? NaN);
}

/** `name usec_per_call` of each command Redis ran since the last `CONFIG RESETSTAT`, one per line. */
async function commandStats(redis: Redis): Promise<string> {
  const info = await redis.info('commandstats');
  return [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+).*usec_per_call=([\d.]+)/gm)]
    .map(([, name, calls, usec]) => `  ${name}: ${calls} calls, ${usec} µs each`)
    .join('\n');
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const own: PrivateRedis | undefined = args.redis === undefined ? await requirePrivateRedis() : undefined;
  const url = args.redis ?? own!.url;
  const keyPrefix = `bench-state-${process.pid}`;
  const store = new RedisStateStore({ redis: url, keyPrefix, name: 'bench' });
  const admin = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    await store.start();
    const keys = Array.from({ length: args.rows }, (_, i) => ({
      mesh: 'bench',
      kind: 'actor' as const,
      id: `p-${i}`,
    }));
    for (let at = 0; at < keys.length; at += store.batchLimit)
      await store.adopt(
        keys.slice(at, at + store.batchLimit).map((key) => ({
          key,
          type: 'player',
          objectGeneration: 1,
          owner: { rid: 'bench', nodeGeneration: 'g1' },
        })),
      );
    const versions = new Array<number>(keys.length).fill(0);
    const state = new Uint8Array(args.stateBytes).map((_, i) => i % 251);
    const writeOf = (i: number): StateWrite => ({
      key: keys[i]!,
      type: 'player',
      epoch: 1,
      expected: versions[i]!,
      schemaVersion: 1,
      state,
      timers: undefined,
      authority: { objectGeneration: 1, authorityOwnerGeneration: 1, rid: 'bench' },
    });

    console.log(`machine: ${JSON.stringify(machineInfo())}`);
    console.log(`Redis: ${own ? 'private redis-server, no persistence' : url}; state ${args.stateBytes} B`);
    console.log(
      '| batch | in flight | writes/s | client CPU µs/write | Redis CPU µs/write | EVALSHA usec_per_call |',
    );
    console.log('| ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const batch of args.batches) {
      for (const inflight of args.inflight) {
        await admin.config('RESETSTAT');
        const before = await redisCounters(admin);
        const cpu0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        let written = 0;
        for (let round = 0; round < args.rounds; round++) {
          // `inflight` lanes over disjoint slices of the keys, each sending its batches one after another.
          const lane = Math.ceil(keys.length / inflight);
          await Promise.all(
            Array.from({ length: inflight }, async (_, l) => {
              for (let at = l * lane; at < Math.min(keys.length, (l + 1) * lane); at += batch) {
                const rows = Array.from(
                  { length: Math.min(batch, (l + 1) * lane - at, keys.length - at) },
                  (_, j) => at + j,
                );
                const results = await store.write(rows.map(writeOf));
                results.forEach((r, j) => {
                  if (!r.ok) throw new Error(`row ${rows[j]}: ${r.reason}`);
                  versions[rows[j]!] = r.version;
                });
                written += rows.length;
              }
            }),
          );
        }
        const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
        const cpu = process.cpuUsage(cpu0);
        const delta = redisDelta(before, await redisCounters(admin));
        const usec = await evalshaUsecPerCall(admin);
        if (args.commands) console.log(await commandStats(admin));
        console.log(
          `| ${batch} | ${inflight} | ${Math.round(written / seconds)} | ` +
            `${((cpu.user + cpu.system) / written).toFixed(1)} | ${(delta.cpuUs / written).toFixed(1)} | ` +
            `${usec.toFixed(2)} |`,
        );
      }
    }
  } finally {
    await store.close();
    await closeRedisClient(admin);
    await own?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
