/*
 * The PostgreSQL State Store's SQL (docs/decisions.md#the-postgresql-provider-issue-54): one table, one
 * row per (mesh, kind, id), and one statement per batch for each call: the rows travel as arrays and
 * `unnest` turns them back into rows, so 500 writes are one round trip and one transaction. `table`
 * below is the table, already quoted. Every integer that reaches JavaScript is read through the store's
 * own int8 parser (`Number`, or `NaN` past 2^53), never pg's global one.
 */
import { Buffer } from 'node:buffer';

/** The columns a table must have, with `format_type`'s name of their type and whether they may be NULL. */
export const COLUMNS: readonly (readonly [name: string, type: string, nullable: boolean])[] = [
  ['mesh', 'text', false],
  ['kind', 'text', false],
  ['id', 'text', false],
  ['type', 'text', false],
  ['epoch', 'bigint', false],
  ['version', 'bigint', false],
  ['schema_version', 'integer', false],
  ['state', 'bytea', true],
  ['timers', 'bytea', true],
  ['object_generation', 'bigint', false],
  ['authority_owner_generation', 'bigint', false],
  ['owner_rid', 'text', false],
  ['saved_at', 'timestamp with time zone', false],
  ['tombstone_expires_at', 'timestamp with time zone', true],
];

/** The key every statement matches rows on: the primary key, and `ON CONFLICT`'s arbiter. */
export const KEY_COLUMNS = ['mesh', 'kind', 'id'] as const;

/** The largest integer a JavaScript number holds exactly: a larger epoch or version is unreadable. */
const MAX_SAFE = '9007199254740991';

export function createTable(table: string, tableOnly: string): string[] {
  const columns = COLUMNS.map(([name, type, nullable]) => `${name} ${type}${nullable ? '' : ' NOT NULL'}`);
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (${columns.join(', ')}, PRIMARY KEY (${KEY_COLUMNS.join(', ')}))`,
    // The sweep's: only tombstones are in it, so it stays as small as the destroyed objects of a day.
    `CREATE INDEX IF NOT EXISTS "${tableOnly}_tombstones" ON ${table} (tombstone_expires_at)
      WHERE tombstone_expires_at IS NOT NULL`,
  ];
}

/** The table's columns as `[name, type, notNull, hasDefault]` (none when there is no such table). */
export const READ_COLUMNS = `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
    a.attnotnull AS not_null, a.atthasdef AS has_default
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  WHERE c.oid = to_regclass($1) AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped`;

/** The table's unique, immediate, whole-table indexes: each one's key columns. */
export const READ_UNIQUE_KEYS = `SELECT array(
    SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(n, o)
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n
    WHERE k.o <= i.indnkeyatts ORDER BY a.attname) AS columns
  FROM pg_index i WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indimmediate
    AND i.indpred IS NULL AND i.indexprs IS NULL`;

/**
 * Whether row `r` can be read: what another version or a hand edit may have left is refused as
 * `unreadable`, and no statement changes such a row. An epoch and a version stay one below 2^53, so
 * the `+ 1` of an adopt or a write is still exact.
 */
function readable(r: string): string {
  return `COALESCE(${r}.epoch BETWEEN 1 AND ${MAX_SAFE} - 1
    AND ${r}.version BETWEEN 0 AND ${MAX_SAFE} - 1 AND ${r}.schema_version >= 0
    AND ${r}.object_generation BETWEEN 0 AND ${MAX_SAFE}
    AND ${r}.authority_owner_generation BETWEEN 0 AND ${MAX_SAFE}
    AND ${r}.kind IN ('spot', 'actor') AND ${r}.type <> '' AND isfinite(${r}.saved_at)
    AND octet_length(COALESCE(${r}.state, '\\x00')) > 0 AND octet_length(COALESCE(${r}.timers, '\\x00')) > 0,
    false)`;
}

/** Whether row `r` is a tombstone past its time: absent to every call, and the sweep's to delete. */
const expired = (r: string) => `COALESCE(${r}.tombstone_expires_at <= now(), false)`;

/** `saved_at` in ms since the epoch (NULL when it is no finite time: the row is then unreadable). */
const savedAtMs = (r: string) =>
  `CASE WHEN isfinite(${r}.saved_at) THEN floor(extract(epoch FROM ${r}.saved_at) * 1000)::int8 END`;

/** What an adopt answers per row, read as `AdoptedRow`. */
const SAVED = `r.mesh, r.kind, r.id, r.type, r.epoch, r.version, r.schema_version, r.state, r.timers,
  ${savedAtMs('r')} AS saved_at, ${readable('r')} AS readable`;

/** Columns an adopt of an expired tombstone sets as a fresh row's; of a live row, leaves as they are. */
const KEPT_ON_ADOPT = [
  'type',
  'version',
  'schema_version',
  'state',
  'timers',
  'authority_owner_generation',
  'saved_at',
];

/**
 * The adopt of a batch. $1..$6: mesh, kind, id, type, ObjectGeneration and owner rid per row; $7..$9:
 * the keys adopted with `force`. An absent row is inserted as a fence row; an existing one is bumped
 * when it is readable and its last adopter's ObjectGeneration is no larger (or forced), and an expired
 * tombstone is replaced by a fence row. Answers the rows it created or bumped; a refused row (newer
 * owner, unreadable) is left as it was and not answered: the store reads it with `READ_ROWS`.
 */
export function adoptStatement(table: string): string {
  const fresh = expired('r');
  const set = [
    ...KEPT_ON_ADOPT.map((c) => `${c} = CASE WHEN ${fresh} THEN EXCLUDED.${c} ELSE r.${c} END`),
    `epoch = CASE WHEN ${fresh} THEN 1 ELSE r.epoch + 1 END`,
    'object_generation = EXCLUDED.object_generation',
    'owner_rid = EXCLUDED.owner_rid',
    'tombstone_expires_at = NULL',
  ];
  return `INSERT INTO ${table} AS r (${COLUMNS.map(([name]) => name).join(', ')})
    SELECT a.mesh, a.kind, a.id, a.type, 1, 0, 0, NULL, NULL, a.og, 0, a.rid, now(), NULL
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::text[])
      AS a(mesh, kind, id, type, og, rid)
    ON CONFLICT (${KEY_COLUMNS.join(', ')}) DO UPDATE SET ${set.join(', ')}
    WHERE ${fresh} OR (${readable('r')} AND (r.object_generation <= EXCLUDED.object_generation
      OR (EXCLUDED.mesh, EXCLUDED.kind, EXCLUDED.id) IN
        (SELECT * FROM unnest($7::text[], $8::text[], $9::text[]))))
    RETURNING ${SAVED}`;
}

/**
 * The write of a batch. $1..$13 per row: mesh, kind, id, type, epoch, expected version, schema version,
 * state, timers, ObjectGeneration, AuthorityOwnerGeneration, rid, tombstone; $14: the tombstone time in
 * ms. Applies to each row still at the write's epoch and expected version (readable, not an expired
 * tombstone), and answers those; the store reads the others with `READ_ROWS` to say why.
 */
export function writeStatement(table: string): string {
  return `UPDATE ${table} AS r SET type = w.type, version = w.expected + 1, schema_version = w.schema_version,
      state = w.state, timers = w.timers, object_generation = w.og, authority_owner_generation = w.aog,
      owner_rid = w.rid, saved_at = now(),
      tombstone_expires_at = CASE WHEN w.tombstone THEN now() + $14::int8 * interval '1 millisecond' END
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::int8[], $7::int4[],
        $8::bytea[], $9::bytea[], $10::int8[], $11::int8[], $12::text[], $13::bool[])
      AS w(mesh, kind, id, type, epoch, expected, schema_version, state, timers, og, aog, rid, tombstone)
    WHERE r.mesh = w.mesh AND r.kind = w.kind AND r.id = w.id AND r.epoch = w.epoch
      AND r.version = w.expected AND NOT ${expired('r')} AND ${readable('r')}
    RETURNING r.mesh, r.kind, r.id, r.version`;
}

/** The rows of the keys $1..$3 (mesh, kind, id), as they are now: why a call left them as they were. */
export function readStatement(table: string): string {
  return `SELECT r.mesh, r.kind, r.id, r.epoch, r.version, r.object_generation,
      ${readable('r')} AS readable, ${expired('r')} AS expired
    FROM unnest($1::text[], $2::text[], $3::text[]) AS k(mesh, kind, id)
    JOIN ${table} r ON r.mesh = k.mesh AND r.kind = k.kind AND r.id = k.id`;
}

/**
 * Deletes up to $1 expired tombstones. The outer condition is checked again on a row changed meanwhile,
 * so a tombstone adopted back to life between the two reads stays.
 */
export function sweepStatement(table: string): string {
  return `DELETE FROM ${table} AS d WHERE ${expired('d')} AND (mesh, kind, id) IN (
    SELECT mesh, kind, id FROM ${table} AS t WHERE ${expired('t')} LIMIT $1)`;
}

/**
 * `bytes` as the text of a PostgreSQL `bytea[]` parameter (hex, NULL for `undefined`), made at once:
 * a caller may reuse its buffers as soon as `write` returns its promise.
 */
export function byteaArray(bytes: readonly (Uint8Array | undefined)[]): string {
  const items = bytes.map((b) =>
    b === undefined ? 'NULL' : `"\\\\x${Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')}"`,
  );
  return `{${items.join(',')}}`;
}
