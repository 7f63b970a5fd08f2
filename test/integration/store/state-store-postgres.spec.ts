/**
 * The State Store contract on `PostgresStateStore` (issue 54), on the real shared PostgreSQL: each
 * `handles()` call on a table of its own (dropped after the file), each handle on its own pool. Then
 * what only PostgreSQL has: options, `pg` loaded when a store starts, a server that does not answer at
 * start, a table of the wrong shape, a connection cut under a write, integers past 2^53, the tombstone
 * sweep, and one statement (one transaction, as the server counts) for a batch of 500 writes.
 */
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { type Socket, createServer } from 'node:net';
import pg from 'pg';
import type { ObjectKey, StateStore } from '../../../lib/core/index.js';
import { loadPg } from '../../../lib/store/postgres/pg-driver.js';
import { COLUMNS } from '../../../lib/store/postgres/postgres-sql.js';
import {
  PostgresStateStore,
  type PostgresStateStoreOptions,
} from '../../../lib/store/postgres/postgres-state-store.js';
import { Cleanup, freePort, outcome, within } from '../../helpers/index.js';
import { POSTGRES_URL, adminPool, freshName, postgresPort, postgresUrlWith } from '../../helpers/postgres.js';
import { RecordingProxy } from '../../helpers/tcp-proxy.js';
import { bytes, claim, freshKey, stateStoreContract, write } from './state-store-contract.js';

const admin = adminPool();
/** What the file created on the server, dropped after its tests (`DROP ... IF EXISTS`). */
const created: string[] = [];
const tableOf = new WeakMap<StateStore, string>();

function freshTable(): string {
  const table = freshName();
  created.push(`TABLE IF EXISTS ${table}`);
  return table;
}

/** Resolves once `check()` resolves true, asking every 50 ms; rejects naming `what` after `timeoutMs`. */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

afterAll(async () => {
  for (const what of created.reverse()) await admin.query(`DROP ${what}`);
  await admin.end();
});

stateStoreContract({
  name: 'PostgresStateStore',
  handles: (n, { tombstoneTtlMs }) => {
    const table = freshTable();
    return Array.from({ length: n }, () => {
      const store = new PostgresStateStore({
        connectionString: POSTGRES_URL,
        table,
        tombstoneTtlMs,
        poolSize: 2,
      });
      tableOf.set(store, table);
      return store;
    });
  },
  corrupt: async (store, key) => {
    await admin.query(
      `UPDATE ${tableOf.get(store)} SET version = -1 WHERE mesh = $1 AND kind = $2 AND id = $3`,
      [key.mesh, key.kind, key.id],
    );
  },
  sweep: async (store) => {
    await (store as PostgresStateStore).sweep();
  },
});

describe('PostgresStateStore', () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.closeAll());

  /** A store on a fresh table (or the given one), closed after the test; not started. */
  const storeOn = (options: PostgresStateStoreOptions = {}) =>
    cleanup.add(new PostgresStateStore({ connectionString: POSTGRES_URL, table: freshTable(), ...options }));
  const keyArgs = (key: ObjectKey) => [key.mesh, key.kind, key.id];

  it('names itself, and refuses an option it cannot take, naming the field', () => {
    const store = new PostgresStateStore({ connectionString: POSTGRES_URL });
    expect([store.name, store.batchLimit, store.concurrency]).toEqual([
      `State Store 'postgres' (PostgreSQL ${new URL(POSTGRES_URL).pathname.slice(1)}/zlink_state)`,
      1000,
      4,
    ]);
    const players = new PostgresStateStore({
      name: 'players',
      database: 'game',
      table: 'game.state',
      poolSize: 8,
    });
    expect([players.name, players.concurrency]).toEqual([
      "State Store 'players' (PostgreSQL game/game.state)",
      8,
    ]);
    const refusals: [Record<string, unknown>, string][] = [
      [{ table: 'ZLink' }, 'table'],
      [{ table: 'a.b.c' }, 'table'],
      [{ table: 'x; DROP TABLE y' }, 'table'],
      [{ table: 'x'.repeat(53) }, 'table'],
      [{ table: '' }, 'table'],
      [{ poolSize: 0 }, 'poolSize'],
      [{ poolSize: 1.5 }, 'poolSize'],
      [{ port: 0 }, 'port'],
      [{ connectTimeoutMs: 0 }, 'connectTimeoutMs'],
      [{ queryTimeoutMs: -1 }, 'queryTimeoutMs'],
      [{ tombstoneTtlMs: Number.NaN }, 'tombstoneTtlMs'],
      [{ connectionString: 'http://127.0.0.1/test' }, 'connectionString'],
      [{ password: 5 }, 'password'],
      [{ ssl: 'yes' }, 'ssl'],
      [{ name: '' }, 'name'],
      [{ tabel: 'x' }, 'tabel'],
    ];
    for (const [options, field] of refusals)
      expect(() => new PostgresStateStore(options as PostgresStateStoreOptions)).toThrow(
        expect.objectContaining({
          code: 'Configuration',
          message: expect.stringContaining(`PostgresStateStore options.${field}`),
        }),
      );
  });

  it("loads pg when it starts; without it, start fails Configuration saying to install 'pg'", async () => {
    const missing = Object.assign(new Error("Cannot find package 'pg'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const result = await outcome(loadPg("State Store 'players'", () => Promise.reject(missing)));
    expect(result.ok || [result.code, (result.error as Error).message]).toEqual([
      'Configuration',
      "State Store 'players' needs the 'pg' package, which could not be loaded: install it (npm install pg)",
    ]);
  });

  it('a server that refuses or never answers at start: Unavailable naming the store, within the bound', async () => {
    const closed = await freePort();
    const refused = await outcome(storeOn({ connectionString: postgresUrlWith({ port: closed }) }).start());
    expect(refused.ok || refused.code).toBe('Unavailable');
    expect((refused as { error: Error }).error.message).toMatch(
      new RegExp(`^State Store 'postgres' .*: start cannot connect to 127\\.0\\.0\\.1:${closed}/\\w+ within`),
    );

    const held = new Set<Socket>();
    const silent = createServer((socket) => held.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const store = storeOn({ connectionString: postgresUrlWith({ port }), connectTimeoutMs: 500 });
      const unanswered = await outcome(store.start());
      expect([unanswered.ok || unanswered.code, unanswered.ms >= 450, unanswered.ms < 3000]).toEqual([
        'Unavailable',
        true,
        true,
      ]);
      expect((unanswered as { error: Error }).error.message).toContain('within 500 ms');
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('an existing table of the wrong shape: Configuration naming the table and the column', async () => {
    const columns = (change: (c: readonly [string, string, boolean]) => string | undefined) =>
      COLUMNS.map((c) => change(c) ?? `${c[0]} ${c[1]}`);
    const shapes: [string[], string, RegExp][] = [
      [
        columns(([n]) => (n === 'epoch' ? 'epoch integer' : undefined)),
        ', PRIMARY KEY (mesh, kind, id)',
        /has column epoch of type integer, not bigint$/,
      ],
      [
        columns(([n]) => (n === 'timers' ? '' : undefined)).filter(Boolean),
        ', PRIMARY KEY (mesh, kind, id)',
        /has no column timers \(bytea\)$/,
      ],
      [
        columns(() => undefined),
        ', PRIMARY KEY (mesh, id)',
        /has no primary key or unique index on exactly \(mesh, kind, id\)$/,
      ],
      [
        [...columns(() => undefined), 'note text NOT NULL'],
        ', PRIMARY KEY (mesh, kind, id)',
        /has column note, NOT NULL without a default/,
      ],
    ];
    for (const [list, key, problem] of shapes) {
      const table = freshTable();
      await admin.query(`CREATE TABLE ${table} (${list.join(', ')}${key})`);
      const result = await outcome(storeOn({ table }).start());
      expect(result.ok || result.code).toBe('Configuration');
      const message = (result as { error: Error }).error.message;
      expect(message).toMatch(
        new RegExp(`^State Store 'postgres' \\(PostgreSQL \\w+/${table}\\): table ${table} `),
      );
      expect(message).toMatch(problem);
    }
    // A table made by hand with every column, and one more that may stay NULL, is taken as it is.
    const table = freshTable();
    await admin.query(
      `CREATE TABLE ${table} (${columns(() => undefined).join(', ')}, note text, PRIMARY KEY (id, kind, mesh))`,
    );
    const store = storeOn({ table });
    await store.start();
    expect((await store.adopt([claim(freshKey(), 1)]))[0]).toMatchObject({ ok: true, saved: { epoch: 1 } });
  });

  it('a schema-qualified table is created in its schema; a schema that does not exist is Configuration', async () => {
    const schema = freshName('zlink_state_schema');
    await admin.query(`CREATE SCHEMA ${schema}`);
    created.push(`SCHEMA IF EXISTS ${schema} CASCADE`);
    const store = storeOn({ table: `${schema}.rows` });
    await store.start();
    await store.adopt([claim(freshKey(), 1)]);
    expect((await admin.query(`SELECT count(*)::int AS n FROM ${schema}.rows`)).rows).toEqual([{ n: 1 }]);
    const missing = await outcome(storeOn({ table: `${schema}_absent.rows` }).start());
    expect(missing.ok || missing.code).toBe('Configuration');
    expect((missing as { error: Error }).error.message).toMatch(
      /table \w+_absent\.rows cannot be created or read: .*schema/,
    );
  });

  it('start twice is harmless; a call before start or after close is Unavailable; close twice is harmless', async () => {
    const store = storeOn();
    const early = await outcome(store.adopt([claim(freshKey(), 1)]));
    expect([early.ok || early.code, (early as { error: Error }).error.message]).toEqual([
      'Unavailable',
      expect.stringContaining('not started'),
    ]);
    await Promise.all([store.start(), store.start()]);
    await store.start();
    await store.close();
    await store.close();
    const late = await outcome(store.write([write(freshKey(), 1, 0, bytes(1))]));
    expect([late.ok || late.code, (late as { error: Error }).error.message]).toEqual([
      'Unavailable',
      expect.stringContaining('closed'),
    ]);
  });

  it("integers past 2^53 read as unreadable; pg's global int8 parser is left as it was", async () => {
    const table = freshTable();
    const store = storeOn({ table });
    await store.start();
    const key = freshKey();
    await store.adopt([claim(key, 1)]);
    await admin.query(
      `UPDATE ${table} SET epoch = 2^60 WHERE mesh = $1 AND kind = $2 AND id = $3`,
      keyArgs(key),
    );
    const [read] = await store.adopt([claim(key, 1)]);
    expect(read).toEqual({
      ok: false,
      reason: 'unreadable',
      error: expect.objectContaining({ code: 'ProtocolError' }),
    });
    expect(read!.ok || read!.reason !== 'unreadable' || read!.error.message).toMatch(
      /cannot be read.*nothing done$/,
    );
    // Another pg client of the same process still reads bigint as the string pg gives by default.
    expect((await admin.query('SELECT 9007199254740993::int8 AS n')).rows).toEqual([
      { n: '9007199254740993' },
    ]);
    expect(pg.types.getTypeParser(20)('5')).toBe('5');
  });

  it('text PostgreSQL cannot hold, or a schema version past its integer: InvalidArgument, nothing done', async () => {
    const store = storeOn();
    await store.start();
    const refused = async (call: Promise<unknown>, text: RegExp) => {
      const result = await outcome(call);
      expect(result.ok || result.code).toBe('InvalidArgument');
      expect((result as { error: Error }).error.message).toMatch(text);
    };
    await refused(store.adopt([claim(freshKey(), 1), claim(freshKey({ id: 'a\0b' }), 1)]), /row 1 .*NUL/);
    await refused(store.adopt([claim(freshKey(), 1, { type: 'p\ud800' })]), /unpaired surrogate/);
    const key = freshKey();
    await refused(store.write([write(key, 1, 0, bytes(1), { schemaVersion: 2 ** 31 })]), /schemaVersion/);
    expect(await store.adopt([claim(key, 1)])).toEqual([expect.objectContaining({ ok: true })]);
  });

  it('the sweep deletes expired tombstones only; the store also sweeps by itself', async () => {
    const table = freshTable();
    const store = storeOn({ table, tombstoneTtlMs: 300 });
    await store.start();
    const rows = async () => Number((await admin.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    const [gone, revived, live] = [freshKey(), freshKey(), freshKey()];
    await store.adopt([claim(gone, 1), claim(revived, 1), claim(live, 1)]);
    await store.write([
      write(gone, 1, 0, undefined, { tombstone: true }),
      write(revived, 1, 0, undefined, { tombstone: true }),
    ]);
    await store.adopt([claim(revived, 1)]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    // Deleted by this sweep or the store's own, whichever came first: only the expired tombstone.
    expect(await store.sweep()).toBeLessThanOrEqual(1);
    expect(await rows()).toBe(2);
    await store.write([write(live, 1, 0, undefined, { tombstone: true })]);
    await until(async () => (await rows()) === 1, 5000, 'the store sweeping by itself');
  });

  it('a connection cut under a write rejects the call, no row answered; the store recovers', async () => {
    const proxy = cleanup.add(await RecordingProxy.start({ target: postgresPort() }));
    const table = freshTable();
    const store = storeOn({
      table,
      connectionString: postgresUrlWith({ port: proxy.port }),
      poolSize: 1,
      connectTimeoutMs: 1000,
    });
    await store.start();
    const key = freshKey();
    await store.adopt([claim(key, 1)]);
    const version = async () =>
      Number(
        (
          await admin.query(
            `SELECT version FROM ${table} WHERE mesh = $1 AND kind = $2 AND id = $3`,
            keyArgs(key),
          )
        ).rows[0].version,
      );

    // The server applies the write; its answer is lost, then the connection is cut.
    proxy.stall('down');
    const cut = outcome(store.write([write(key, 1, 0, bytes(1))]));
    await until(async () => (await version()) === 1, 5000, 'the write applied on the server');
    proxy.cut();
    const failed = await within(cut, 5000, 'the cut write');
    expect([failed.ok || failed.code, failed.ok || (failed.error as Error).message]).toEqual([
      'Unavailable',
      expect.stringMatching(/write got no answer; each row's outcome is unknown/),
    ]);
    // The answer was lost, not the write: the same write again finds its own version.
    expect(await store.write([write(key, 1, 0, bytes(1))])).toEqual([
      { ok: false, reason: 'version', version: 1 },
    ]);

    // While nothing gets through, calls fail; once the way is back, they go on.
    proxy.target = undefined;
    proxy.cut();
    const down = await outcome(store.write([write(key, 1, 1, bytes(2))]));
    expect(down.ok || down.code).toBe('Unavailable');
    proxy.target = postgresPort();
    expect(await store.write([write(key, 1, 1, bytes(2))])).toEqual([{ ok: true, version: 2 }]);
  });

  it('a batch of 500 adopts, then of 500 writes, is one transaction each, as the server counts', async () => {
    // In a database of the test's own, so that only its store's transactions count there.
    const db = freshName('zlink_state_db');
    await admin.query(`CREATE DATABASE ${db}`);
    created.push(`DATABASE IF EXISTS ${db} WITH (FORCE)`);
    const url = postgresUrlWith({ database: db });
    const counts = async (): Promise<number[]> => {
      const { rows } = await admin.query(
        'SELECT xact_commit, tup_inserted, tup_updated FROM pg_stat_database WHERE datname = $1',
        [db],
      );
      return [rows[0].xact_commit, rows[0].tup_inserted, rows[0].tup_updated].map(Number);
    };
    // A backend reports its counts when it exits (an idle one may wait seconds): each step runs on a
    // store of its own, closed after it, and the counts are read once two reads a second apart agree.
    // A step's own count is what it adds to those of a store that only starts and closes.
    const settled = async (): Promise<number[]> => {
      let last = await counts();
      for (let i = 0; i < 15; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1100));
        const now = await counts();
        if (now.join() === last.join()) return now;
        last = now;
      }
      throw new Error(`the counts of ${db} kept changing`);
    };
    let last = await settled();
    const step = async (work: (store: PostgresStateStore) => Promise<unknown>): Promise<number[]> => {
      const store = new PostgresStateStore({ connectionString: url, poolSize: 1 });
      await store.start();
      await work(store);
      await store.close();
      const now = await settled();
      const added = now.map((n, j) => n - last[j]!);
      last = now;
      return added;
    };
    await step(async () => {
      const other = adminPool(url);
      await other.query('ALTER TABLE zlink_state SET (autovacuum_enabled = false)'); // none in the counts
      await other.end();
    });
    const [commits, inserted, updated] = await step(() => Promise.resolve());
    const keys = Array.from({ length: 500 }, () => freshKey());
    const adopt = await step(async (store) =>
      expect((await store.adopt(keys.map((key) => claim(key, 1)))).every((r) => r.ok)).toBe(true),
    );
    expect(adopt).toEqual([commits + 1, inserted + 500, updated]);
    const state = new Uint8Array(4096).fill(7);
    const written = await step(async (store) =>
      expect(await store.write(keys.map((key) => write(key, 1, 0, state)))).toEqual(
        Array(500).fill({ ok: true, version: 1 }),
      ),
    );
    expect(written).toEqual([commits + 1, inserted, updated + 500]);
  });
});
