import { EventEmitter } from 'node:events';
import { tcpTransport } from './node-transports.js';
import { type SessionAddress, sessionAddress } from './session-address.js';
import {
  type SessionClientMethods,
  type SessionClientSettings,
  sessionClientClass,
} from './session-machine.js';

/**
 * A small client of the session wire (docs/sessions-wire.md) for Node: a test harness, a bot, a load
 * generator, or a game client written in TypeScript. It opens one TCP connection, says Hello, and
 * gives requests (one result each), one-way sends and pushes; with `reconnect` it opens a new session
 * after a lost connection, waiting longer each time. Uses `node:net` and msgpack only (no zeromq).
 * Where it connects: `endpoint`, the listener's endpoint as `runtime.sessions.endpoint()` gives it
 * (`tcp://host:port`), or `host` and `port`.
 */
export type SessionClientOptions = SessionAddress & SessionClientSettings;

/**
 * Events (docs/sessions.md#the-node-client): `open` (SessionWelcome) for every session, `close`
 * (SessionClientClose) once for every session or attempt that ends, `push` (packet, msg) for every Push,
 * `reconnecting` (delayMs) after a `close` when a new attempt is due. Its constructor throws
 * `Configuration` (naming the field) for a malformed `endpoint`, or a bad `host` or `port`.
 */
export const ZLinkSessionClient = sessionClientClass(EventEmitter, (options: SessionClientOptions) =>
  tcpTransport(sessionAddress(options)),
);
export type ZLinkSessionClient = EventEmitter & SessionClientMethods;
