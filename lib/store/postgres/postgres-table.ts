import type { PoolClient } from 'pg';
import { ZLinkError } from '../../core/errors.js';
import type { NormalizedPostgresOptions } from './postgres-options.js';
import { COLUMNS, KEY_COLUMNS, READ_COLUMNS, READ_UNIQUE_KEYS, createTable } from './postgres-sql.js';

interface ColumnRow {
  readonly name: string;
  readonly type: string;
  readonly not_null: boolean;
  readonly has_default: boolean;
}

/** SQLSTATE classes that say the statement, not the connection, is wrong: a name, a schema, a right. */
const REFUSED_CLASSES = ['42', '3F'];

/**
 * Makes the store's table ready on `client`: creates it (and its tombstone index) when absent, or checks
 * that an existing one can hold the rows. Handles starting at once take turns on an advisory lock, as
 * two `CREATE TABLE IF NOT EXISTS` racing each other can both try to create it. Rejects `Configuration`
 * naming the table (and the column) when it cannot hold rows or cannot be created; any other failure is
 * the connection's, thrown as it is.
 */
export async function prepareTable(client: PoolClient, o: NormalizedPostgresOptions): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`nestjs-zlink state ${o.table}`]);
    const found = await client.query<ColumnRow>(READ_COLUMNS, [o.table]);
    if (found.rows.length > 0) {
      checkColumns(o, found.rows);
      const keys = await client.query<{ columns: string[] }>(READ_UNIQUE_KEYS, [o.table]);
      if (!keys.rows.some((k) => k.columns.join() === [...KEY_COLUMNS].sort().join()))
        throw refused(o, `has no primary key or unique index on exactly (${KEY_COLUMNS.join(', ')})`);
    }
    for (const statement of createTable(o.table, o.tableOnly)) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    const sqlState = (error as { code?: unknown }).code;
    if (typeof sqlState === 'string' && REFUSED_CLASSES.includes(sqlState.slice(0, 2)))
      throw refused(o, `cannot be created or read: ${(error as Error).message}`, error);
    throw error;
  }
}

function checkColumns(o: NormalizedPostgresOptions, rows: readonly ColumnRow[]): void {
  const byName = new Map(rows.map((row) => [row.name, row]));
  for (const [name, type] of COLUMNS) {
    const column = byName.get(name);
    if (column === undefined) throw refused(o, `has no column ${name} (${type})`);
    if (column.type !== type) throw refused(o, `has column ${name} of type ${column.type}, not ${type}`);
  }
  const known = new Set(COLUMNS.map(([name]) => name));
  const blocking = rows.find((row) => !known.has(row.name) && row.not_null && !row.has_default);
  if (blocking !== undefined)
    throw refused(
      o,
      `has column ${blocking.name}, NOT NULL without a default, which no row this store adds sets`,
    );
}

function refused(o: NormalizedPostgresOptions, problem: string, cause?: unknown): ZLinkError {
  return new ZLinkError('Configuration', `${o.name}: table ${o.tableName} ${problem}`, {
    cause,
    details: { table: o.tableName },
  });
}
