import type { CustomTypesConfig } from 'pg';
import { ZLinkError } from '../../core/errors.js';

/** The `pg` package, an optional peer: loaded when a PostgreSQL State Store starts, never before. */
export type PgModule = typeof import('pg');

/**
 * Loads `pg` for the store named `storeName`. An application that never starts a PostgreSQL State Store
 * needs no `pg` installed, and one that does pays for loading it only then. Rejects `Configuration`
 * naming the store and the package when it cannot be loaded.
 */
export async function loadPg(
  storeName: string,
  load: () => Promise<PgModule> = () => import('pg'),
): Promise<PgModule> {
  try {
    return await load();
  } catch (error) {
    throw new ZLinkError(
      'Configuration',
      `${storeName} needs the 'pg' package, which could not be loaded: install it (npm install pg)`,
      { cause: error },
    );
  }
}

/** PostgreSQL's type id of `bigint` (int8). */
const INT8_OID = 20;

/** A `bigint` as a number when it is exact, else `NaN`: a row holding it reads as unreadable. */
function parseInt8(text: string): number {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : Number.NaN;
}

/**
 * The type parsers of the store's own statements: pg's, except `bigint`, which pg reads as a string
 * (it may not fit a number). Given per statement, so pg's global parsers, which the application may
 * rely on, stay as they are.
 */
export function storeTypes(pg: PgModule): CustomTypesConfig {
  const getTypeParser = (oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format);
  return { getTypeParser: getTypeParser as CustomTypesConfig['getTypeParser'] };
}
