import process from 'node:process';
import type { ConnectionOptions } from 'node:tls';
import { ZLinkError, configurationError } from '../../core/errors.js';
import { checkKeys, isRecord, positiveInt } from '../../core/option-checks.js';
import { STATE_TOMBSTONE_TTL_MS } from '../../core/ports/index.js';

/**
 * Where a `PostgresStateStore` connects and what it keeps its rows in. The connection fields are pg's own
 * (`connectionString`, `host`, `port`, `database`, `user`, `password`, `ssl`), passed through; the
 * `PG*` environment variables fill in what is not set, as for any pg client.
 */
export interface PostgresStateStoreOptions {
  /**
   * Names the store in messages: `State Store '<name>' (PostgreSQL <database>/<table>)`.
   * @default 'postgres'
   */
  readonly name?: string;
  /** A `postgres://` URL (pg's `connectionString`); the fields below override its parts. */
  readonly connectionString?: string;
  readonly host?: string;
  readonly port?: number;
  readonly database?: string;
  readonly user?: string;
  /** The password, or a function pg calls for it at each new connection. */
  readonly password?: string | (() => string | Promise<string>);
  /** TLS to the server (pg's `ssl`): `true`, or `node:tls` options. */
  readonly ssl?: boolean | ConnectionOptions;
  /**
   * The one table the rows live in, created at `start()` when absent: a lowercase SQL identifier,
   * optionally schema-qualified (`game.zlink_state`; the schema must exist).
   * @default 'zlink_state'
   */
  readonly table?: string;
  /** Connections in the store's pool, and so the `adopt`/`write` calls worth having in flight. @default 4 */
  readonly poolSize?: number;
  /** How long opening one connection may take before it fails, in ms. @default 5000 */
  readonly connectTimeoutMs?: number;
  /**
   * How long one statement may go unanswered before its call fails (each row's outcome unknown), in ms.
   * @default 10000
   */
  readonly queryTimeoutMs?: number;
  /** How long a destroyed object's tombstone stays, in ms. @default 86400000 (one day) */
  readonly tombstoneTtlMs?: number;
}

/** The options as the store uses them: checked, defaults filled in. */
export interface NormalizedPostgresOptions {
  /** The store's name in messages. */
  readonly name: string;
  /** The table as SQL: each part double-quoted, `"game"."zlink_state"`. */
  readonly table: string;
  /** The table as the user wrote it, for messages. */
  readonly tableName: string;
  /** The table's name without its schema (its index is named after it). */
  readonly tableOnly: string;
  readonly poolSize: number;
  readonly connectTimeoutMs: number;
  readonly queryTimeoutMs: number;
  readonly tombstoneTtlMs: number;
  /** What pg's `Pool` is given to connect (the fields above that were set). */
  readonly connection: Readonly<Record<string, unknown>>;
  /** `host:port/database` for messages, never a secret. */
  readonly target: string;
}

const KEYS = [
  'name',
  'connectionString',
  'host',
  'port',
  'database',
  'user',
  'password',
  'ssl',
  'table',
  'poolSize',
  'connectTimeoutMs',
  'queryTimeoutMs',
  'tombstoneTtlMs',
] as const;

/** A lowercase SQL identifier that needs no quoting; 52 characters leave room for `_tombstones`. */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,51}$/;
const FIELD = 'PostgresStateStore options';

const refuse = (where: string, field: string, problem: string) =>
  configurationError(`${where}.${field}`, problem);

function optionalString(where: string, options: Record<string, unknown>, field: string): string | undefined {
  const value = options[field];
  if (value !== undefined && (typeof value !== 'string' || value.length === 0))
    throw refuse(where, field, 'must be a non-empty string');
  return value;
}

/**
 * Checks `options` whole; throws `Configuration` naming `<where>.<field>` (`PostgresStateStore options`
 * unless the `stateStores` option it came from is named).
 */
export function normalizePostgresOptions(
  options: PostgresStateStoreOptions,
  where: string = FIELD,
): NormalizedPostgresOptions {
  if (!isRecord(options)) throw new ZLinkError('Configuration', `${where} must be an object`);
  const raw = options as Record<string, unknown>;
  checkKeys(where, raw, KEYS);
  const name = optionalString(where, raw, 'name') ?? 'postgres';
  const connectionString = optionalString(where, raw, 'connectionString');
  const host = optionalString(where, raw, 'host');
  const database = optionalString(where, raw, 'database');
  optionalString(where, raw, 'user');
  const { port, password, ssl } = options;
  if (port !== undefined && (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535))
    throw refuse(where, 'port', 'must be an integer 1..65535');
  if (password !== undefined && typeof password !== 'string' && typeof password !== 'function')
    throw refuse(where, 'password', 'must be a string or a function');
  if (ssl !== undefined && typeof ssl !== 'boolean' && !isRecord(ssl))
    throw refuse(where, 'ssl', 'must be a boolean or node:tls options');
  const url = connectionString === undefined ? undefined : parseUrl(where, connectionString);
  const tableName = optionalString(where, raw, 'table') ?? 'zlink_state';
  const parts = tableName.split('.');
  if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part)))
    throw refuse(
      where,
      'table',
      `must be a lowercase SQL identifier of at most 52 characters, optionally schema-qualified (game.zlink_state), got '${tableName}'`,
    );
  const db = database ?? url?.database ?? process.env.PGDATABASE ?? 'postgres';
  const connection = Object.fromEntries(
    (['connectionString', 'host', 'port', 'database', 'user', 'password', 'ssl'] as const)
      .filter((key) => options[key] !== undefined)
      .map((key) => [key, options[key]]),
  );
  return {
    name: `State Store '${name}' (PostgreSQL ${db}/${tableName})`,
    table: parts.map((part) => `"${part}"`).join('.'),
    tableName,
    tableOnly: parts[parts.length - 1]!,
    poolSize: boundedInt(where, 'poolSize', options.poolSize, 4, 1000),
    connectTimeoutMs: positiveInt(`${where}.connectTimeoutMs`, options.connectTimeoutMs, 5000),
    queryTimeoutMs: positiveInt(`${where}.queryTimeoutMs`, options.queryTimeoutMs, 10000),
    tombstoneTtlMs: positiveInt(`${where}.tombstoneTtlMs`, options.tombstoneTtlMs, STATE_TOMBSTONE_TTL_MS),
    connection,
    target: `${host ?? url?.host ?? process.env.PGHOST ?? 'localhost'}${port === undefined ? '' : `:${port}`}/${db}`,
  };
}

function boundedInt(where: string, field: string, value: unknown, fallback: number, max: number): number {
  const n = positiveInt(`${where}.${field}`, value, fallback);
  if (n > max) throw refuse(where, field, `must be at most ${max}, got ${n}`);
  return n;
}

/** The host and database of a `postgres://` URL (pg reads the rest); `Configuration` when it is no URL. */
function parseUrl(where: string, text: string): { host: string | undefined; database: string | undefined } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse(where, 'connectionString', 'must be a postgres:// or postgresql:// URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw refuse(
      where,
      'connectionString',
      `must be a postgres:// or postgresql:// URL, got ${url.protocol}//`,
    );
  const database = decodeURIComponent(url.pathname.slice(1));
  return { host: url.host === '' ? undefined : url.host, database: database === '' ? undefined : database };
}
