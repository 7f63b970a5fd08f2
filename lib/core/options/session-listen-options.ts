import { Buffer } from 'node:buffer';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { configurationError } from '../errors.js';
import {
  type ListenOptions,
  type NormalizedListen,
  checkKeys,
  isRecord,
  normalizeListen,
} from '../option-checks.js';
import { TrustedProxies } from './trusted-proxies.js';

/**
 * How game clients reach a session listener entry (docs/sessions.md#listener-kinds): every kind
 * carries the same frame bodies (docs/sessions-wire.md) to the same handlers.
 * - `tcp`: plain TCP, each frame body behind a 4-byte length.
 * - `tls`: the same bytes inside TLS (1.2 or later).
 * - `websocket`: one binary WebSocket message per frame body (no length prefix); `wss` with `tls`.
 */
export type SessionListenKind = 'tcp' | 'tls' | 'websocket';
const KINDS: readonly SessionListenKind[] = ['tcp', 'tls', 'websocket'];

/** The TLS versions a listener may require at least. */
export type SessionTlsVersion = 'TLSv1.2' | 'TLSv1.3';
const TLS_VERSIONS: readonly SessionTlsVersion[] = ['TLSv1.2', 'TLSv1.3'];

/** A listener's TLS: PEM contents (read the files yourself), not paths. */
export interface SessionTlsOptions {
  /** The private key, PEM (unencrypted). */
  key: string | Buffer;
  /** The certificate (and its chain), PEM. */
  cert: string | Buffer;
  /** CA certificates to trust instead of Node's defaults (only needed for client certificates). */
  ca?: string | Buffer | (string | Buffer)[];
  /** The oldest TLS version accepted. @default 'TLSv1.2' */
  minVersion?: SessionTlsVersion;
}

/** One place a session listener accepts game clients (`sessions.<name>.listen`, or one of its entries). */
export interface SessionListenOptions extends ListenOptions {
  /** The transport clients use to reach it. @default 'tcp' */
  kind?: SessionListenKind;
  /** Required for `tls`; for `websocket` it makes the listener `wss`. */
  tls?: SessionTlsOptions;
  /** `websocket` only: the HTTP path clients upgrade on; another path is answered 404. @default '/' */
  path?: string;
  /**
   * `websocket` only: the `Origin` values allowed to upgrade (e.g. `'https://game.example.com'`);
   * another is answered 403. @default any origin
   */
  origins?: readonly string[];
  /** `websocket` only: negotiate per-message deflate. @default false */
  perMessageDeflate?: boolean;
  /**
   * `tcp` and `tls` only: each connection starts with a PROXY protocol header (v1 or v2) from a load
   * balancer, naming the client's address. Needs `trustedProxies`. @default false
   */
  proxyProtocol?: boolean;
  /**
   * Addresses and CIDR ranges (or `loopback`, `linklocal`, `uniquelocal`) of the proxies believed about
   * a client's address: whose PROXY header is read (`tcp`, `tls`), whose `X-Forwarded-For` is
   * (`websocket`). @default nobody
   */
  trustedProxies?: readonly string[];
}

export interface NormalizedSessionTls {
  readonly key: string | Buffer;
  readonly cert: string | Buffer;
  readonly ca: readonly (string | Buffer)[] | undefined;
  readonly minVersion: SessionTlsVersion;
}

export interface NormalizedSessionListen {
  /** The option's path, for errors and logs: `sessions.<name>.listen`, or `...listen[i]` in an array. */
  readonly field: string;
  readonly kind: SessionListenKind;
  readonly listen: NormalizedListen;
  readonly tls: NormalizedSessionTls | undefined;
  /** `'/'` unless a websocket entry says otherwise. */
  readonly path: string;
  readonly origins: readonly string[] | undefined;
  readonly perMessageDeflate: boolean;
  readonly proxyProtocol: boolean;
  readonly trustedProxies: TrustedProxies;
}

const LISTEN_KEYS = [
  'port',
  'bindHost',
  'advertiseHost',
  'kind',
  'tls',
  'path',
  'origins',
  'perMessageDeflate',
  'proxyProtocol',
  'trustedProxies',
];
const WEBSOCKET_KEYS = ['path', 'origins', 'perMessageDeflate'] as const;
const TLS_KEYS = ['key', 'cert', 'ca', 'minVersion'];

/**
 * `sessions.<name>.listen`: one entry or an array of them, each checked (`Configuration` naming
 * `<field>.tls`, `<field>[1].path`, ...); always at least one entry (a `tcp` one on a free port when
 * left out).
 */
export function normalizeSessionListens(field: string, value: unknown): readonly NormalizedSessionListen[] {
  if (!Array.isArray(value)) return [normalizeEntry(field, value)];
  if (value.length === 0)
    throw configurationError(field, 'must name at least one place to listen (or be left out)');
  return value.map((entry: unknown, i) => normalizeEntry(`${field}[${i}]`, entry));
}

function normalizeEntry(at: string, value: unknown): NormalizedSessionListen {
  if (value === undefined) value = {};
  if (!isRecord(value))
    throw configurationError(at, 'must be an object { kind?, port?, bindHost?, advertiseHost?, ... }');
  checkKeys(at, value, LISTEN_KEYS);
  const kind = value.kind ?? 'tcp';
  if (!KINDS.includes(kind as SessionListenKind))
    throw configurationError(
      `${at}.kind`,
      `must be ${KINDS.map((k) => `'${k}'`).join(', ')}, got ${JSON.stringify(kind)}`,
    );
  const websocket = kind === 'websocket';
  if (!websocket)
    for (const key of WEBSOCKET_KEYS)
      if (value[key] !== undefined)
        throw configurationError(`${at}.${key}`, `is for kind 'websocket' only, not '${String(kind)}'`);
  if (kind === 'tls' && value.tls === undefined)
    throw configurationError(`${at}.tls`, "is required for kind 'tls' ({ key, cert } as PEM)");
  const proxyProtocol = booleanOf(`${at}.proxyProtocol`, value.proxyProtocol);
  // A WebSocket's client address comes from X-Forwarded-For
  // (docs/decisions.md#the-clients-address-behind-a-proxy-issue-53).
  if (proxyProtocol && websocket)
    throw configurationError(
      `${at}.proxyProtocol`,
      "is for kinds 'tcp' and 'tls'; a 'websocket' listener believes X-Forwarded-For from trustedProxies",
    );
  if (proxyProtocol && value.trustedProxies === undefined)
    throw configurationError(
      `${at}.proxyProtocol`,
      'needs trustedProxies: a PROXY header is believed only from the proxies listed there',
    );
  const { port, bindHost, advertiseHost } = value;
  return Object.freeze({
    field: at,
    kind: kind as SessionListenKind,
    listen: normalizeListen(at, { port, bindHost, advertiseHost }),
    tls: value.tls === undefined ? undefined : normalizeTls(`${at}.tls`, value.tls),
    path: websocket ? pathOf(`${at}.path`, value.path) : '/',
    origins: websocket ? originsOf(`${at}.origins`, value.origins) : undefined,
    perMessageDeflate: booleanOf(`${at}.perMessageDeflate`, value.perMessageDeflate),
    proxyProtocol,
    trustedProxies: TrustedProxies.parse(`${at}.trustedProxies`, value.trustedProxies),
  });
}

function booleanOf(field: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean')
    throw configurationError(field, `must be true or false, got ${String(value)}`);
  return value;
}

function pathOf(field: string, value: unknown): string {
  if (value === undefined) return '/';
  if (typeof value !== 'string' || !value.startsWith('/') || /[\s?#]/.test(value))
    throw configurationError(
      field,
      `must be a path starting with '/', without spaces, '?' or '#', got ${JSON.stringify(value)}`,
    );
  return value;
}

function originsOf(field: string, value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0)
    throw configurationError(
      field,
      "must be a non-empty array of Origin values like 'https://game.example.com' (leave it out to allow any)",
    );
  value.forEach((origin: unknown, i) => {
    if (typeof origin !== 'string' || origin.length === 0)
      throw configurationError(`${field}[${i}]`, `must be a non-empty string, got ${JSON.stringify(origin)}`);
  });
  return Object.freeze([...(value as string[])]);
}

const isPem = (value: unknown): value is string | Buffer =>
  (typeof value === 'string' || Buffer.isBuffer(value)) && value.length > 0;

/**
 * The TLS options, each part read as Node will read it at the bind, so a bad PEM fails at startup naming
 * its field: the key (`createPrivateKey`), the certificate and each CA (`X509Certificate`), then the pair
 * together (`tls.createSecureContext`: a key that is not the certificate's).
 */
function normalizeTls(field: string, value: unknown): NormalizedSessionTls {
  if (!isRecord(value)) throw configurationError(field, 'must be an object { key, cert, ca?, minVersion? }');
  checkKeys(field, value, TLS_KEYS);
  const { key, cert } = value;
  if (!isPem(key))
    throw configurationError(`${field}.key`, 'must be the private key as PEM (a string or Buffer)');
  if (!isPem(cert))
    throw configurationError(`${field}.cert`, 'must be the certificate as PEM (a string or Buffer)');
  readPem(`${field}.key`, () => createPrivateKey(key), 'not a usable private key');
  readPem(`${field}.cert`, () => new X509Certificate(cert), 'not a certificate');
  const ca = value.ca === undefined ? undefined : Array.isArray(value.ca) ? value.ca : [value.ca];
  ca?.forEach((one: unknown, i) => {
    const at = Array.isArray(value.ca) ? `${field}.ca[${i}]` : `${field}.ca`;
    if (!isPem(one)) throw configurationError(at, 'must be a CA certificate as PEM (a string or Buffer)');
    readPem(at, () => new X509Certificate(one), 'not a certificate');
  });
  const minVersion = value.minVersion ?? 'TLSv1.2';
  if (!TLS_VERSIONS.includes(minVersion as SessionTlsVersion))
    throw configurationError(
      `${field}.minVersion`,
      `must be ${TLS_VERSIONS.map((v) => `'${v}'`).join(' or ')}, got ${JSON.stringify(minVersion)}`,
    );
  const tls: NormalizedSessionTls = Object.freeze({
    key,
    cert,
    ca: ca && Object.freeze([...(ca as (string | Buffer)[])]),
    minVersion: minVersion as SessionTlsVersion,
  });
  readPem(field, () => createSecureContext(secureContextOptions(tls)), 'key and cert do not make a pair');
  return tls;
}

function readPem(field: string, read: () => unknown, what: string): void {
  try {
    read();
  } catch (error) {
    throw configurationError(field, `${what}: ${(error as Error).message}`);
  }
}

/** What `tls.createServer` (and `createSecureContext`) takes from the normalized options. */
export function secureContextOptions(tls: NormalizedSessionTls): {
  key: string | Buffer;
  cert: string | Buffer;
  ca: (string | Buffer)[] | undefined;
  minVersion: SessionTlsVersion;
} {
  return { key: tls.key, cert: tls.cert, ca: tls.ca && [...tls.ca], minVersion: tls.minVersion };
}

/**
 * Two entries on one explicit port and bind host (across every listener) could never both bind:
 * refused at startup naming the second, rather than failing the bind.
 */
export function checkDistinctPorts(entries: readonly NormalizedSessionListen[]): void {
  const seen = new Map<string, string>();
  for (const { field, listen } of entries) {
    if (listen.port === 0) continue;
    const key = `${listen.bindHost}:${listen.port}`;
    const first = seen.get(key);
    if (first !== undefined)
      throw configurationError(
        `${field}.port`,
        `${listen.bindHost}:${listen.port} is already ${first}'s; each entry needs its own port`,
      );
    seen.set(key, field);
  }
}
