import { Buffer } from 'node:buffer';
import { configurationError } from './errors.js';

/** The checks every option normalizer shares; each failure is a `Configuration` error naming the field. */

export const WEIGHT_MIN = 0;
export const WEIGHT_MAX = 10000;
/** @default 100 */
export const DEFAULT_WEIGHT = 100;

export interface ListenOptions {
  /** @default 0 (a free port; the bound port is what gets advertised) */
  port?: number;
  /** @default '0.0.0.0' */
  bindHost?: string;
  /**
   * Host others use to reach this listener. @default bindHost, or this machine's hostname for a wildcard bind
   */
  advertiseHost?: string;
}

export interface NormalizedListen {
  readonly port: number;
  readonly bindHost: string;
  readonly advertiseHost: string | undefined;
}

/**
 * An integer 0..10000: the one weight rule, for options (`Configuration`), run time (`InvalidArgument`) and
 * the wire.
 */
export function isValidWeight(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= WEIGHT_MIN && value <= WEIGHT_MAX;
}

export function validateWeight(field: string, value: unknown): number {
  if (value === undefined) return DEFAULT_WEIGHT;
  if (!isValidWeight(value)) {
    throw configurationError(
      field,
      `weight must be an integer ${WEIGHT_MIN}..${WEIGHT_MAX}, got ${String(value)}`,
    );
  }
  return value;
}

function intAtLeast(field: string, value: unknown, fallback: number, min: number, expected: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw configurationError(field, `must be ${expected}, got ${String(value)}`);
  }
  return value;
}

export function positiveInt(field: string, value: unknown, fallback: number): number {
  return intAtLeast(field, value, fallback, 1, 'a positive integer');
}

/** An integer `>= 0`, where `0` turns a feature off (a cache, a relay window). */
export function nonNegativeInt(field: string, value: unknown, fallback: number): number {
  return intAtLeast(field, value, fallback, 0, 'an integer >= 0 (0 = off)');
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function checkKeys(field: string, value: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw configurationError(`${field}.${key}`, `unknown option (expected one of: ${allowed.join(', ')})`);
    }
  }
}

/**
 * A NodeRid: 1..255 bytes, and not starting with `ep:`, the prefix our outbound connections are
 * named with (a NodeRid is no routing id — see `mesh-socket.ts` — but one that looked like a
 * connection's name would mislead whoever reads a snapshot or an event).
 */
export function checkNodeRid(field: string, rid: unknown): string {
  checkName(field, rid);
  const bytes = Buffer.byteLength(rid as string, 'utf8');
  if (bytes > 255) throw configurationError(field, `a NodeRid is at most 255 bytes, got ${bytes}`);
  if ((rid as string).startsWith('ep:'))
    throw configurationError(field, "a NodeRid must not start with 'ep:'");
  return rid as string;
}

export function checkName(field: string, name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\0')) {
    throw configurationError(field, 'a name must be a non-empty string without NUL');
  }
  return name;
}

const ENDPOINT = /^tcp:\/\/[^\s:/]+:\d{1,5}$|^tcp:\/\/\[[0-9a-fA-F:]+\]:\d{1,5}$|^(ipc|inproc):\/\/\S+$/;

/** An endpoint zeromq can connect to: `tcp://host:port` (port 1..65535), `ipc://`, `inproc://`. */
export function isEndpoint(value: unknown): value is string {
  const tcpPort =
    typeof value === 'string' && value.startsWith('tcp://')
      ? Number(value.slice(value.lastIndexOf(':') + 1))
      : 1;
  return typeof value === 'string' && ENDPOINT.test(value) && tcpPort >= 1 && tcpPort <= 65535;
}

export function checkEndpoint(field: string, value: unknown): string {
  if (!isEndpoint(value)) {
    throw configurationError(
      field,
      `expected an endpoint like tcp://host:port (port 1..65535), got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

export function normalizeListen(field: string, value: unknown): NormalizedListen {
  if (value === undefined) return { port: 0, bindHost: '0.0.0.0', advertiseHost: undefined };
  if (!isRecord(value))
    throw configurationError(field, 'must be an object { port, bindHost, advertiseHost }');
  checkKeys(field, value, ['port', 'bindHost', 'advertiseHost']);
  const port = value.port ?? 0;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw configurationError(`${field}.port`, `must be an integer 0..65535, got ${String(port)}`);
  }
  const bindHost = value.bindHost ?? '0.0.0.0';
  if (typeof bindHost !== 'string' || bindHost.length === 0)
    throw configurationError(`${field}.bindHost`, 'must be a host');
  const advertiseHost = value.advertiseHost;
  if (advertiseHost !== undefined && (typeof advertiseHost !== 'string' || advertiseHost.length === 0)) {
    throw configurationError(`${field}.advertiseHost`, 'must be a host');
  }
  return { port, bindHost, advertiseHost };
}
