/**
 * The durable objects bench's State Stores as the runner reads them (bench/durable.ts): a private Redis
 * with `appendonly yes` and `appendfsync everysec`, and a database of the bench's own on the shared
 * PostgreSQL (created at start, dropped at the end, never the server's settings). What each counts
 * itself: the rows' versions (every write adds one), Redis's `INFO` (time per script, CPU, memory,
 * `MEMORY USAGE`), PostgreSQL's `pg_stat_database` and its relation sizes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { ObjectKey } from '../lib/core/index.js';
import { closeRedisClient } from '../lib/store/redis/client.js';
import { stateRowKey } from '../lib/store/redis/state-keys.js';
import { type PrivateRedis, requirePrivateRedis } from '../sample/private-redis.js';
import { postgresProblem } from '../scripts/system-deps.mjs';
import { type RedisCounters, redisCounters } from './redis-info.js';
import { DURABLE_MESH } from './systems/zlink-durable.js';

const field = (info: string, name: string): string | undefined =>
  new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();

export const rowKeys = (kind: ObjectKey['kind'], ids: readonly string[]): ObjectKey[] =>
  ids.map((id) => ({ mesh: DURABLE_MESH, kind, id }));

/** The `redis` rows' Redis: what it holds and what it counts. */
export class StateRedis {
  private constructor(
    private readonly server: PrivateRedis,
    private readonly admin: Redis,
    readonly version: string,
  ) {}

  static async start(): Promise<StateRedis> {
    const server = await requirePrivateRedis({ appendfsync: 'everysec' });
    const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      const version = field(await admin.info('server'), 'redis_version') ?? 'unknown';
      return new StateRedis(server, admin, version);
    } catch (error) {
      await closeRedisClient(admin);
      await server.stop();
      throw error;
    }
  }

  get url(): string {
    return this.server.url;
  }

  /** Σ version over the rows of `keys` under `prefix`: how many writes they took in all. */
  async versions(prefix: string, keys: readonly ObjectKey[]): Promise<number> {
    const pipeline = this.admin.pipeline();
    for (const key of keys) pipeline.hget(stateRowKey(prefix, key), 'version');
    const replies = (await pipeline.exec()) ?? [];
    return replies.reduce((sum, [error, value]) => {
      if (error) throw error;
      return sum + Number(value ?? 0);
    }, 0);
  }

  /** Zeroes `INFO commandstats` (not the CPU or memory counters). */
  async resetStats(): Promise<void> {
    await this.admin.config('RESETSTAT');
  }

  counters(): Promise<RedisCounters> {
    return redisCounters(this.admin);
  }

  /** EVALSHA since the last reset: calls (one per batch), and Redis's own time per call (the script alone), µs. */
  async scripts(): Promise<{ calls: number; usecPerCall: number }> {
    const info = await this.admin.info('commandstats');
    const match = /^cmdstat_evalsha:calls=(\d+),usec=\d+,usec_per_call=([\d.]+)/m.exec(info);
    return { calls: Number(match?.[1] ?? 0), usecPerCall: Number(match?.[2] ?? Number.NaN) };
  }

  /** `MEMORY USAGE` (every field counted) of each row of `keys`, averaged: bytes one row takes. */
  async memoryUsage(prefix: string, keys: readonly ObjectKey[]): Promise<number> {
    const pipeline = this.admin.pipeline();
    for (const key of keys) pipeline.call('MEMORY', 'USAGE', stateRowKey(prefix, key), 'SAMPLES', '0');
    const replies = (await pipeline.exec()) ?? [];
    const bytes = replies.map(([error, value]) => {
      if (error) throw error;
      return Number(value);
    });
    return bytes.reduce((a, b) => a + b, 0) / Math.max(1, bytes.length);
  }

  async stop(): Promise<void> {
    await closeRedisClient(this.admin);
    await this.server.stop();
  }
}

/** What PostgreSQL counted for one database (`pg_stat_database`). */
export interface PostgresCounters {
  readonly xactCommit: number;
  readonly tupUpdated: number;
}

/** The `postgres` rows' database: one of the bench's own on the shared server. */
export class StatePostgres {
  /** Statements the bench itself ran in its database (they count in `xact_commit` too). */
  ownStatements = 0;

  private constructor(
    /** On the server's own database: creates and drops the bench's, reads the statistics. */
    private readonly server: pg.Pool,
    /** On the bench's database: reads its tables. */
    private readonly db: pg.Pool,
    readonly database: string,
    readonly url: string,
    /** `server_version` and `synchronous_commit`, as the server says. */
    readonly version: string,
    readonly synchronousCommit: string,
  ) {}

  /** The bench's database on the PostgreSQL at `url`, or why there is none (the part runs without it). */
  static async start(url: string): Promise<StatePostgres | { skipped: string }> {
    const problem = await postgresProblem(url);
    if (problem !== undefined) return { skipped: problem };
    const server = new pg.Pool({ connectionString: url, max: 1 });
    server.on('error', () => undefined);
    const database = `zlink_bench_durable_${process.pid}`;
    try {
      await server.query(`CREATE DATABASE ${database}`);
    } catch (error) {
      await server.end();
      return { skipped: `${new URL(url).host}: CREATE DATABASE refused: ${(error as Error).message}` };
    }
    const own = new URL(url);
    own.pathname = `/${database}`;
    const db = new pg.Pool({ connectionString: own.href, max: 1 });
    db.on('error', () => undefined);
    const show = async (name: string) =>
      (await server.query<Record<string, string>>(`SHOW ${name}`)).rows[0]?.[name] ?? 'unknown';
    const version = (await show('server_version')).split(' ')[0] as string;
    return new StatePostgres(server, db, database, own.href, version, await show('synchronous_commit'));
  }

  private async ownQuery<R extends pg.QueryResultRow>(sql: string): Promise<R[]> {
    this.ownStatements++;
    return (await this.db.query<R>(sql)).rows;
  }

  /** Σ version over `table`: how many writes its rows took in all. */
  async versions(table: string): Promise<number> {
    const [row] = await this.ownQuery<{ v: string | null }>(`SELECT sum(version)::text AS v FROM ${table}`);
    return Number(row?.v ?? 0);
  }

  /**
   * `pg_stat_database` of the bench's database once it stopped moving. A backend reports its counts when
   * it goes idle at most once a second (PostgreSQL 15), and when it exits: read after the object server
   * closed its pool, they are complete.
   */
  async counters(): Promise<PostgresCounters> {
    const read = async (): Promise<PostgresCounters> => {
      const { rows } = await this.server.query<{ c: string; u: string }>(
        'SELECT xact_commit::text AS c, tup_updated::text AS u FROM pg_stat_database WHERE datname = $1',
        [this.database],
      );
      return { xactCommit: Number(rows[0]?.c ?? 0), tupUpdated: Number(rows[0]?.u ?? 0) };
    };
    let last = await read();
    for (let tries = 0; tries < 20; tries++) {
      await sleep(250);
      const now = await read();
      if (now.xactCommit === last.xactCommit && now.tupUpdated === last.tupUpdated) return now;
      last = now;
    }
    return last;
  }

  /** Table, TOAST and index bytes of `table` per row, and the average live row as stored. */
  async bytesPerRow(table: string): Promise<{ rows: number; totalPerRow: number; rowBytes: number }> {
    const [row] = await this.ownQuery<{ n: string; total: string; avg: string | null }>(
      `SELECT count(*)::text AS n, pg_total_relation_size('${table}')::text AS total, ` +
        `avg(pg_column_size(t.*))::text AS avg FROM ${table} t`,
    );
    const rows = Number(row?.n ?? 0);
    return {
      rows,
      totalPerRow: Number(row?.total ?? 0) / Math.max(1, rows),
      rowBytes: Number(row?.avg ?? 0),
    };
  }

  async drop(): Promise<void> {
    await this.db.end().catch(() => undefined);
    try {
      await this.server.query(`DROP DATABASE IF EXISTS ${this.database} WITH (FORCE)`);
    } finally {
      await this.server.end();
    }
  }
}
