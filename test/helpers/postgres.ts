/**
 * The shared PostgreSQL of the State Store tests (ZLINK_POSTGRES_URL, default
 * postgres://postgres@127.0.0.1:5432/test; scripts/setup.sh starts one where none answers). It is
 * never stopped or reconfigured: each test works in tables (or a database) of its own and drops them.
 */
import pg from 'pg';
import process from 'node:process';
import { postgresUrl } from '../../scripts/system-deps.mjs';

export const POSTGRES_URL = postgresUrl();

/** `POSTGRES_URL` with another port (a proxy in front of the server) or database. */
export function postgresUrlWith(changes: { readonly port?: number; readonly database?: string }): string {
  const url = new URL(POSTGRES_URL);
  if (changes.port !== undefined) url.port = String(changes.port);
  if (changes.database !== undefined) url.pathname = `/${changes.database}`;
  return url.href;
}

/** The port the server listens on. */
export const postgresPort = (): number => Number(new URL(POSTGRES_URL).port || 5432);

let names = 0;
/** A table (or database) name no other test or process uses. */
export function freshName(prefix = 'zlink_state_test'): string {
  return `${prefix}_${process.pid}_${++names}`;
}

/** A small pool of the test's own, for what a test does around the store: DDL, a row changed by hand. */
export function adminPool(url = POSTGRES_URL): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined);
  return pool;
}
