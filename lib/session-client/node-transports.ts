import { Buffer } from 'node:buffer';
import { type Socket, connect as tcpConnect, isIP } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls';
import WebSocket from 'ws';
import { configurationError } from '../core/errors.js';
import { FrameSplitter, frame } from '../core/session-wire/index.js';
import { type SessionEndpoint, webSocketUrl } from './session-address.js';
import {
  CLIENT_MAX_FRAME_BYTES,
  GRACEFUL_CLOSE_MS,
  type SessionTransport,
  type SessionTransportEvents,
  type SessionTransportOpener,
  unref,
} from './session-transport.js';
import { type WebSocketLike, webSocketTransport } from './websocket-transport.js';

/** How a `tls://` or `wss://` client checks the server (docs/sessions.md#the-node-client). */
export interface SessionClientTls {
  /**
   * The certificate authorities to trust, PEM contents (not paths), instead of Node's bundled roots:
   * a private CA, a test CA. @default Node's bundled roots
   */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /** The name the server's certificate must carry, also sent as SNI. @default the endpoint's host */
  readonly servername?: string;
  /**
   * `false` takes any certificate: the session is encrypted but anyone in between can read and change
   * it. For a test against a self-signed server only. @default true
   */
  readonly rejectUnauthorized?: boolean;
}

/**
 * What opens each connection of a Node client, by the endpoint's scheme: `tcp` over `node:net`, `tls`
 * over `node:tls` (both length-prefixed byte streams), `ws` and `wss` over the `ws` package. `tls`
 * is checked here, once: only for tls:// and wss://, and its fields' types and CA contents.
 */
export function nodeTransport(
  endpoint: SessionEndpoint,
  tls: SessionClientTls | undefined,
): SessionTransportOpener {
  const secure = tlsOptions(endpoint, tls);
  const { host, port } = endpoint;
  switch (endpoint.scheme) {
    case 'tcp':
      return (events) => streamTransport(tcpConnect({ host, port }), 'connect', events);
    case 'tls':
      return (events) => streamTransport(tlsConnect({ host, port, ...secure }), 'secureConnect', events);
    case 'ws':
    case 'wss': {
      const url = webSocketUrl(endpoint);
      return webSocketTransport(
        () =>
          // The `ws` socket has the browser's shape (on* handlers, binaryType) but types of its own.
          new WebSocket(url, {
            ...secure,
            maxPayload: CLIENT_MAX_FRAME_BYTES,
            perMessageDeflate: false,
          }) as unknown as WebSocketLike,
      );
    }
  }
}

/** The `node:tls` options of a tls:// or wss:// endpoint; `tls` on any other is a `Configuration` error. */
function tlsOptions(endpoint: SessionEndpoint, tls: SessionClientTls | undefined): ConnectionOptions {
  const secure = endpoint.scheme === 'tls' || endpoint.scheme === 'wss';
  if (tls === undefined) return secure ? { servername: serverName(endpoint.host) } : {};
  if (!secure)
    throw configurationError(
      'tls',
      `is for tls:// and wss:// endpoints only; this one is ${endpoint.scheme}://`,
    );
  if (typeof tls !== 'object' || tls === null)
    throw configurationError(
      'tls',
      `must be an object ({ ca?, servername?, rejectUnauthorized? }), got ${typeof tls}`,
    );
  const { ca, servername, rejectUnauthorized } = tls;
  if (servername !== undefined && (typeof servername !== 'string' || servername === ''))
    throw configurationError(
      'tls.servername',
      `must be a non-empty string, got ${JSON.stringify(servername)}`,
    );
  if (rejectUnauthorized !== undefined && typeof rejectUnauthorized !== 'boolean')
    throw configurationError(
      'tls.rejectUnauthorized',
      `must be a boolean, got ${JSON.stringify(rejectUnauthorized)}`,
    );
  if (ca !== undefined) checkCa(ca);
  return {
    ...(ca === undefined ? {} : { ca: ca as string | Buffer | (string | Buffer)[] }),
    servername: servername ?? serverName(endpoint.host),
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
  };
}

/**
 * Each CA PEM certificates, as contents, each one readable: Node would pass over a path, a PEM of
 * something else or a broken certificate, and the client then fail every connection instead.
 */
function checkCa(ca: unknown): void {
  for (const one of Array.isArray(ca) ? (ca as unknown[]) : [ca]) {
    const text =
      typeof one === 'string' ? one : one instanceof Uint8Array ? Buffer.from(one).toString('latin1') : '';
    const pems = text.match(/-----BEGIN CERTIFICATE-----[^-]*-----END CERTIFICATE-----/g) ?? [];
    if (pems.length === 0)
      throw configurationError('tls.ca', 'must be PEM certificates (their contents, not paths)');
    for (const pem of pems) {
      try {
        new X509Certificate(pem);
      } catch (error) {
        throw configurationError(
          'tls.ca',
          `holds a certificate that cannot be read: ${(error as Error).message}`,
        );
      }
    }
  }
}

/** SNI carries a host name, never an address: an IP endpoint sends none (the certificate is checked against the IP). */
function serverName(host: string): string | undefined {
  return isIP(host) ? undefined : host;
}

/**
 * A byte stream carrying length-prefixed frames (docs/sessions-wire.md#framing): one splitter reads
 * the server's bodies back out of whatever chunks arrive, and the frames queued in one turn leave in
 * one socket write, not a syscall and a TCP segment each (a burst of requests reaches the server as a
 * few reads).
 */
function streamTransport(
  socket: Socket,
  ready: 'connect' | 'secureConnect',
  events: SessionTransportEvents,
): SessionTransport {
  const splitter = new FrameSplitter(CLIENT_MAX_FRAME_BYTES);
  let out: Uint8Array[] = [];
  let failure = '';
  socket.setNoDelay(true);
  socket.on(ready, () => events.opened());
  socket.on('data', (chunk: Buffer) => {
    const fault = splitter.push(chunk, (body) => {
      events.body(body);
      return !socket.destroyed;
    });
    if (fault) events.fault(fault);
  });
  socket.on('error', (error) => (failure = `: ${error.message}`));
  socket.on('close', () => events.closed(`the connection closed${failure}`));
  const flush = (): void => {
    const frames = out;
    if (frames.length === 0) return;
    out = [];
    if (!socket.destroyed)
      socket.write(frames.length === 1 ? (frames[0] as Uint8Array) : Buffer.concat(frames));
  };
  return {
    send(body) {
      if (socket.destroyed) return;
      out.push(frame(body));
      if (out.length === 1) queueMicrotask(flush);
    },
    close(graceful) {
      if (!graceful) return void socket.destroy();
      flush();
      socket.end();
      unref(setTimeout(() => socket.destroy(), GRACEFUL_CLOSE_MS));
    },
  };
}
