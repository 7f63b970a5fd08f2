import { EventEmitter } from 'node:events';
import { type SessionClientTls, nodeTransport } from './node-transports.js';
import { type SessionAddress, sessionAddress } from './session-address.js';
import type { SessionClientMethods, SessionClientSettings } from './session-api.js';
import { sessionClientClass } from './session-machine.js';

/**
 * A client of the session wire (docs/sessions-wire.md) for Node: a test harness, a bot, a load
 * generator, or a game client written in TypeScript. It opens one connection, says Hello, and gives
 * requests (one result each), one-way sends and pushes; with `resume` it gets its session back after a
 * lost connection, and with `reconnect` it opens a new one, waiting longer each time. No zeromq inside. Where it connects: `endpoint`, a
 * listener's endpoint as `runtime.sessions.endpoint()` gives it, whose scheme picks the transport
 * (`tcp://host:port`, `tls://host:port`, `ws://host:port/path`, `wss://host:port/path`), or `host` and
 * `port` (TCP). `tls` says how a tls:// or wss:// client checks the server.
 */
export type SessionClientOptions = SessionAddress &
  SessionClientSettings & { readonly tls?: SessionClientTls };

/**
 * Events (docs/sessions.md#the-node-client): `open` (SessionWelcome) for every new session, `close`
 * (SessionClientClose) once for every session or attempt that ends, `push` (packet, msg) for every Push,
 * `reconnecting` (delayMs) when a new attempt is due, and with `resume` `dropped` (SessionClientDrop)
 * and `resumed` (SessionWelcome). Its constructor throws
 * `Configuration` (naming the field) for a malformed `endpoint`, a bad `host` or `port`, a bad `tls`,
 * `resume` or `resumeFrom`.
 */
export const ZLinkSessionClient = sessionClientClass(EventEmitter, (options: SessionClientOptions) =>
  nodeTransport(sessionAddress(options), options.tls),
);
export type ZLinkSessionClient = EventEmitter & SessionClientMethods;
