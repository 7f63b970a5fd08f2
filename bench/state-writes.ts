/**
 * State writes per second through one PostgresStateStore (figures in
 * docs/decisions.md#the-postgresql-provider-issue-54): `--lanes` callers, each writing its own `--batch`
 * objects of `--bytes` of state again and again (each write replacing the version the last one made),
 * for `--seconds`, on a pool of `--pool` connections; the state is random bytes. Prints writes per
 * second in all and per connection, and the time one batch took (p50, p99). On a table of its own in
 * the PostgreSQL of ZLINK_POSTGRES_URL (default: the tests'), dropped at the end; the machine's other
 * load counts in the figures.
 *
 * Usage (after `tsc -p tsconfig.bench.json`):
 *   node .bench-build/bench/state-writes.js [--batch 64] [--pool 4] [--lanes <pool>] [--bytes 4096]
 *     [--seconds 5]
 */
import { randomBytes } from 'node:crypto';
import process from 'node:process';
import { PostgresStateStore } from '../lib/store/postgres/postgres-state-store.js';
import type { ObjectKey, StateWrite } from '../lib/core/index.js';
import { postgresUrl } from '../scripts/system-deps.mjs';

interface Args {
  readonly batch: number;
  readonly pool: number;
  readonly lanes: number;
  readonly bytes: number;
  readonly seconds: number;
}

function parse(argv: string[]): Args {
  const flag = (name: string, fallback: number): number => {
    const at = argv.indexOf(name);
    return at >= 0 ? Number(argv[at + 1]) : fallback;
  };
  const pool = flag('--pool', 4);
  return {
    batch: flag('--batch', 64),
    pool,
    lanes: flag('--lanes', pool),
    bytes: flag('--bytes', 4096),
    seconds: flag('--seconds', 5),
  };
}

const authority = { objectGeneration: 1, authorityOwnerGeneration: 1, rid: 'bench' };

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const table = `zlink_state_bench_${process.pid}`;
  const store = new PostgresStateStore({ connectionString: postgresUrl(), table, poolSize: args.pool });
  await store.start();
  try {
    const lanes = Array.from({ length: args.lanes }, (_, lane) =>
      Array.from({ length: args.batch }, (_, i): ObjectKey => ({
        mesh: 'bench',
        kind: 'actor',
        id: `${lane}-${i}`,
      })),
    );
    for (const keys of lanes)
      await store.adopt(
        keys.map((key) => ({
          key,
          type: 'player',
          objectGeneration: 1,
          owner: { rid: 'bench', nodeGeneration: 'g' },
        })),
      );
    // Random bytes: no compression flatters the figures (PostgreSQL's TOAST would squeeze a pattern).
    const state = new Uint8Array(randomBytes(args.bytes));
    const took: number[] = [];
    let writes = 0;
    const deadline = performance.now() + args.seconds * 1000;
    await Promise.all(
      lanes.map(async (keys) => {
        for (let version = 0; performance.now() < deadline; version++) {
          const batch = keys.map((key): StateWrite => ({
            key,
            type: 'player',
            epoch: 1,
            expected: version,
            schemaVersion: 1,
            state,
            timers: undefined,
            authority,
          }));
          const t0 = performance.now();
          const results = await store.write(batch);
          took.push(performance.now() - t0);
          if (!results.every((r) => r.ok))
            throw new Error(`a write was refused: ${JSON.stringify(results[0])}`);
          writes += results.length;
        }
      }),
    );
    took.sort((a, b) => a - b);
    const perSecond = writes / args.seconds;
    const at = (q: number) => took[Math.min(took.length - 1, Math.floor(q * took.length))]!.toFixed(1);
    console.log(
      `batch ${args.batch}, ${args.bytes} B, pool ${args.pool}, ${args.lanes} lanes: ${Math.round(perSecond)} writes/s ` +
        `(${Math.round(perSecond / args.pool)} per connection, ${Math.round((perSecond * args.bytes) / 2 ** 20)} MiB/s); ` +
        `a batch p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`,
    );
  } finally {
    await store.close();
    const pg = await import('pg');
    const admin = new pg.default.Client({ connectionString: postgresUrl() });
    await admin.connect();
    await admin.query(`DROP TABLE IF EXISTS ${table}`);
    await admin.end();
  }
}

await main();
