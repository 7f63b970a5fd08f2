/**
 * `nestjs-zlink/session-client/browser`: the session client for browsers (an HTML5 game, the page of
 * a Unity WebGL build) over the browser's own WebSocket, one binary message per frame body
 * (docs/sessions-wire.md#framing). The same protocol, methods and events as the Node client
 * (docs/sessions.md#the-node-client), reaching a gateway's `websocket` listener by its `ws://` or
 * `wss://` endpoint. An ES module with no Node built-in and no Buffer anywhere in its imports
 * (test/unit/session-client/browser-entry.spec.ts walks them): a bundler or an import map serves it as
 * it is, with msgpackr's browser build.
 */
import { configurationError } from '../core/errors.js';
import { SessionEmitter } from './emitter.js';
import { sessionAddress, webSocketUrl } from './session-address.js';
import type { SessionClientMethods, SessionClientSettings } from './session-api.js';
import { sessionClientClass } from './session-machine.js';
import type { SessionTransportOpener } from './session-transport.js';
import { type WebSocketLike, webSocketTransport } from './websocket-transport.js';

/** A browser client's options: the listener's `ws://` or `wss://` endpoint, and the usual settings. */
export type BrowserSessionClientOptions = { readonly endpoint: string } & SessionClientSettings;

/**
 * Events: `open` (SessionWelcome) for every new session, `close` (SessionClientClose) once for every
 * session or attempt that ends, `push` (packet, msg) for every Push, `reconnecting` (delayMs) when a new
 * attempt is due, and with `resume` `dropped` (SessionClientDrop) and `resumed` (SessionWelcome). A
 * page reload loses the session unless the page keeps `client.resumeState` (in `sessionStorage`) and
 * gives it back as `resumeFrom`. Its constructor throws `Configuration` (naming the field) for an endpoint
 * that is not ws:// or wss://, and for `tls` (a browser checks certificates itself).
 */
export const ZLinkSessionClient = sessionClientClass(SessionEmitter, browserTransport);
export type ZLinkSessionClient = SessionEmitter & SessionClientMethods;

function browserTransport(options: BrowserSessionClientOptions): SessionTransportOpener {
  const given = options as BrowserSessionClientOptions & { host?: unknown; tls?: unknown };
  if (given.tls !== undefined)
    throw configurationError(
      'tls',
      "a browser checks the server's certificate itself: trust its CA in the browser",
    );
  if (given.endpoint === undefined)
    throw configurationError(
      'endpoint',
      "a browser connects to the listener's ws:// or wss:// endpoint (no host and port)",
    );
  const endpoint = sessionAddress({ endpoint: given.endpoint });
  if (endpoint.scheme !== 'ws' && endpoint.scheme !== 'wss')
    throw configurationError(
      'endpoint',
      `a browser reaches a session listener over WebSocket only: ws:// or wss://, got ${JSON.stringify(given.endpoint)}`,
    );
  const url = webSocketUrl(endpoint);
  return webSocketTransport(() => {
    const WebSocket = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
    if (WebSocket === undefined) throw new Error('no WebSocket in this environment');
    return new WebSocket(url);
  });
}

export type { SessionClientEvents } from './emitter.js';
export * from './common.js';
