import { configurationError } from '../core/errors.js';

/** Where the client connects: the listener's endpoint as the server gives it, or a TCP host and port. */
export type SessionAddress =
  | { readonly endpoint: string; readonly host?: never; readonly port?: never }
  | { readonly host: string; readonly port: number; readonly endpoint?: never };

/** What carries the session: its endpoint's scheme (docs/sessions.md#the-node-client). */
export type SessionScheme = 'tcp' | 'tls' | 'ws' | 'wss';

/** An endpoint read: the scheme, the host (an IPv6 address without brackets), the port and, for ws/wss, the path. */
export interface SessionEndpoint {
  readonly scheme: SessionScheme;
  readonly host: string;
  readonly port: number;
  /** The WebSocket's path and query (`/` when the endpoint has none); `''` for tcp and tls. */
  readonly path: string;
}

/**
 * `scheme://host:port` or `scheme://[v6 address]:port`, then for ws and wss a path (and query); the
 * endpoints `runtime.sessions.endpoint()` and `endpoints()` return, or a WebSocket URL a browser would
 * take. The port may be left out of a ws/wss URL only (80, 443).
 */
const ENDPOINT = /^(tcp|tls|wss?):\/\/(?:\[([0-9a-fA-F:.]+)\]|([^\s:/?#[\]]+))(?::(\d{1,5}))?([/?][^\s#]*)?$/;

const DEFAULT_PORT: Readonly<Record<SessionScheme, number | undefined>> = {
  tcp: undefined,
  tls: undefined,
  ws: 80,
  wss: 443,
};

/**
 * The endpoint to connect to, checked once when the client is made: a malformed endpoint, an unknown
 * scheme, a missing host or a port outside 1..65535 is a `Configuration` error naming the field.
 * `host` and `port` mean TCP.
 */
export function sessionAddress(address: SessionAddress): SessionEndpoint {
  if (address.endpoint !== undefined) {
    const endpoint = address.endpoint;
    const match = typeof endpoint === 'string' ? ENDPOINT.exec(endpoint) : null;
    const scheme = match?.[1] as SessionScheme | undefined;
    const port = match?.[4] === undefined ? scheme && DEFAULT_PORT[scheme] : Number(match[4]);
    const path = match?.[5] ?? '';
    const stream = scheme === 'tcp' || scheme === 'tls';
    if (!match || !scheme || port === undefined || port < 1 || port > 65535 || (stream && path !== ''))
      throw configurationError(
        'endpoint',
        'expected a listener endpoint: tcp://host:port, tls://host:port, ws://host:port/path or ' +
          `wss://host:port/path (port 1..65535), got ${JSON.stringify(endpoint)}`,
      );
    const host = (match[2] ?? match[3]) as string;
    return { scheme, host, port, path: stream ? '' : path.startsWith('/') ? path : `/${path}` };
  }
  const { host, port } = address as { host: unknown; port: unknown };
  if (typeof host !== 'string' || host.length === 0)
    throw configurationError('host', 'give endpoint (tcp://host:port, ...) or host and port');
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
    throw configurationError('port', `must be an integer 1..65535, got ${JSON.stringify(port)}`);
  return { scheme: 'tcp', host, port, path: '' };
}

/** The URL a WebSocket connects to (the host bracketed again when it is an IPv6 address). */
export function webSocketUrl(endpoint: SessionEndpoint): string {
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  return `${endpoint.scheme}://${host}:${endpoint.port}${endpoint.path}`;
}
