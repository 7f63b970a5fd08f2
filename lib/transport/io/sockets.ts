import { randomBytes } from 'node:crypto';
import { Dealer, Router, type Socket, Subscriber, XPublisher } from 'zeromq';
import { MAX_MESSAGE_BYTES } from './socket-limits.js';
import { HANDSHAKE_MS, SEND_RECHECK_MS, SUBSCRIBER_RECONNECT_MAX_MS } from '../timing.js';

/**
 * Every zeromq socket ZLink opens is made here, one function per role, so an option that concerns
 * them all (CURVE next) is set in one place: `secured`. Each function takes only what varies per
 * socket; every other value is fixed here with the reason it has.
 */

/** The roles of ZLink's sockets: which side of a connection each one is decides its security options. */
export type SocketRole = 'mesh-router' | 'listener-router' | 'client-dealer' | 'publisher' | 'subscriber';

/** A socket's own CURVE keys and the ZAP domain its accepted connections are checked under. */
export interface SocketCurve {
  readonly publicKey: string;
  readonly secretKey: string;
  readonly zapDomain: string;
}

/**
 * The one place for security options. With CURVE, a socket that accepts is a CURVE server (its key
 * pair; every client key goes to the ZAP handler under `zapDomain`); one that connects is told the
 * server's key at each connect (`connectTo`). A MeshNode's ROUTER does both: it binds as a server and
 * becomes a client for the length of each `connect` call only. Without `curve`, plain ZMTP.
 */
function secured<O extends object>(role: SocketRole, options: O, curve?: SocketCurve): O {
  if (curve === undefined) return options;
  const own = { curvePublicKey: curve.publicKey, curveSecretKey: curve.secretKey };
  const accepts = role === 'mesh-router' || role === 'listener-router' || role === 'publisher';
  // `zapEnforceDomain`: with no ZAP handler to ask, a connection is refused, never let in unchecked.
  const server = { curveServer: true, zapDomain: curve.zapDomain, zapEnforceDomain: true };
  return { ...options, ...own, ...(accepts && server) };
}

/**
 * Runs `connect` (one `socket.connect`) as a CURVE client of the server holding `serverKey` (the only key
 * that connection will talk to), or in plain ZMTP without one. libzmq takes a connection's security options
 * when `connect` is called, so a socket that also accepts (a MeshNode's ROUTER) is a server again after it.
 */
export function connectTo(
  socket: Socket & { curveServerKey: string | null; curveServer: boolean },
  serverKey: string | undefined,
  connect: () => void,
): void {
  if (serverKey === undefined) return connect();
  const wasServer = socket.curveServer;
  socket.curveServerKey = serverKey;
  try {
    connect();
  } finally {
    if (wasServer) socket.curveServer = true;
  }
}

/** How many times `observed` asks for a socket's observer before the error is the caller's. */
const OBSERVER_ATTEMPTS = 4;

/**
 * Makes `socket`'s event observer now (zeromq.js keeps it: later `socket.events` reads return it),
 * so no event zeromq reports after a connect or bind is missed.
 *
 * zeromq.js names an observer's inproc endpoint after the native Observer's memory address. A
 * closed socket's observer is released at once, while libzmq may still hold that socket — and its
 * monitor endpoint — a little longer (its reaper, linger; longer on a busy machine). When the
 * memory is reused meanwhile, the new observer's bind fails `EADDRINUSE` (zeromq.js#716) and, left
 * alone, a MeshNode would not start or a client connection would see no connect or disconnect. A
 * failed Observer's memory stays taken until it is collected, so the next attempt gets another
 * address.
 */
export function observed<S extends Socket>(socket: S): S {
  for (let attempt = 1; ; attempt++) {
    try {
      void socket.events;
      return socket;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EADDRINUSE' || attempt >= OBSERVER_ATTEMPTS) throw error;
    }
  }
}

/**
 * No socket here runs ZMTP heartbeats (`heartbeatInterval` stays 0): liveness is ours, in records
 * (`silence.ts`). libzmq 4.3.5, the one zeromq.js ships, aborts the whole process
 * (`Assertion failed: !_io_error (src/stream_engine_base.cpp:310)`) when a connection whose input it
 * had stopped — its pipe full because the application reads slower than the peer sends, or gone
 * because a ROUTER handed the connection's routing id to a newer one — fails (RST, or FIN and then a
 * write) and afterwards writes a ZMTP PING or PONG: the heartbeat timer writes a PING without looking,
 * and answering a PING found in the input buffer when the input restarts writes a PONG. So no socket
 * sends a PING (the peer's PONG path) and none has the timer (our own). libzmq#4841 reports the
 * assertion; its proposed fix (libzmq#4852) was not taken. docs/decisions.md, "No ZMTP heartbeats".
 *
 * TCP keepalive instead finds a connection whose host is gone: libzmq closes it once the probes go
 * unanswered, where a half-open connection would otherwise stay open for good (nothing is written to
 * a connection nobody routes to any more).
 */
const KEEPALIVE = {
  tcpKeepalive: 1,
  tcpKeepaliveIdle: 10,
  tcpKeepaliveInterval: 5,
  tcpKeepaliveCount: 3,
} as const;
/**
 * zeromq messages a client DEALER holds for its server before the pump waits. A zeromq message may
 * carry up to 512 records, so the default HWM (1000 messages) would let half a million records wait
 * inside zeromq: keep that backlog near the source-local queue's size.
 */
const CLIENT_SEND_HWM_MESSAGES = 32;

/**
 * A MeshNode's one ROUTER; it binds and connects to its peers. Its routing id is never its NodeRid:
 * each connect announces a fresh random one (`connectionId`, see `mesh-socket.ts`), and the peer table
 * maps a connection to a NodeRid only once its hello is proven. Every socket here refuses a zeromq
 * message over `MAX_MESSAGE_BYTES` (the XPUB publisher receives only subscriptions and keeps
 * zeromq's default), and has linger 0: nothing waits in zeromq after close.
 */
export function meshRouter(ipv6: boolean, curve?: SocketCurve): Router {
  return observed(
    new Router(
      secured(
        'mesh-router',
        {
          routingId: connectionId(),
          // A send to a pipe that is gone fails (EHOSTUNREACH) instead of vanishing: the peer is lost.
          mandatory: true,
          // Only the connection that announced a routing id knows it (random per connect, and under
          // CURVE sent encrypted), so the one newer connection that can announce it again is the same
          // link reconnected by libzmq after its side saw the old connection fail: it replaces the
          // old, half-open one at once. (Without handover that reconnect would wait, unnamed, until
          // the old connection closed.)
          handover: true,
          linger: 0,
          ipv6,
          maxMessageSize: MAX_MESSAGE_BYTES,
          handshakeInterval: HANDSHAKE_MS,
          ...KEEPALIVE,
        },
        curve,
      ),
    ),
  );
}

/**
 * A routing id no one can guess: 16 random bytes, in letters so it never starts with the zero byte
 * libzmq keeps for the ids it makes itself.
 */
export function connectionId(): string {
  return `z${randomBytes(16).toString('base64url')}`;
}

/** The ROUTER listener of one ClientServer Server channel. */
export function listenerRouter(ipv6: boolean, curve?: SocketCurve): Router {
  const router = new Router(
    secured(
      'listener-router',
      {
        linger: 0,
        ipv6,
        maxMessageSize: MAX_MESSAGE_BYTES,
        handshakeInterval: HANDSHAKE_MS,
        ...KEEPALIVE,
      },
      curve,
    ),
  );
  // With CURVE its connection events tell which client was refused (a plain one, say).
  return curve === undefined ? router : observed(router);
}

/**
 * A Client's DEALER toward one ClientServer server endpoint. `immediate`: records are queued only
 * to a completed connection, so they never wait in zeromq for a server that is not there, to be
 * delivered later to whoever comes back. A write that finds the HWM reached times out after
 * `SEND_RECHECK_MS`, so the pump can look again whether the connection still stands.
 */
export function clientDealer(endpoint: string, curve?: SocketCurve): Dealer {
  return observed(
    new Dealer(
      secured(
        'client-dealer',
        {
          linger: 0,
          immediate: true,
          ipv6: endpoint.includes('['),
          sendHighWaterMark: CLIENT_SEND_HWM_MESSAGES,
          sendTimeout: SEND_RECHECK_MS,
          maxMessageSize: MAX_MESSAGE_BYTES,
          ...KEEPALIVE,
        },
        curve,
      ),
    ),
  );
}

export interface PublisherSocketOptions {
  /** Wait at a full subscriber queue instead of dropping that subscriber's share. */
  readonly noDrop: boolean;
  readonly sendHighWaterMark: number;
  readonly ipv6: boolean;
  readonly curve?: SocketCurve;
}

/**
 * A fanout publisher: an XPUB, to see each subscriber's subscriptions (every one, repeats too:
 * a new subscriber's beacon subscription is answered with a beacon at once).
 */
export function publisherSocket(options: PublisherSocketOptions): XPublisher {
  const socket = new XPublisher(
    secured(
      'publisher',
      {
        linger: 0,
        noDrop: options.noDrop,
        sendHighWaterMark: options.sendHighWaterMark,
        ipv6: options.ipv6,
        handshakeInterval: HANDSHAKE_MS,
        ...KEEPALIVE,
      },
      options.curve,
    ),
  );
  socket.verbosity = 'allSubs';
  // With CURVE its connection events tell which subscriber was refused (a plain one, say).
  return options.curve === undefined ? socket : observed(socket);
}

/**
 * A fanout subscriber's SUB toward one publisher endpoint. zeromq reconnects it by itself; with CURVE
 * a refused handshake is tried again at a growing interval (up to `SUBSCRIBER_RECONNECT_MAX_MS`), not
 * every 100 ms for as long as the keys disagree. Its connection events say why a handshake was refused.
 */
export function subscriberSocket(
  endpoint: string,
  receiveHighWaterMark: number,
  curve?: SocketCurve,
): Subscriber {
  const socket = new Subscriber(
    secured(
      'subscriber',
      {
        linger: 0,
        receiveHighWaterMark,
        maxMessageSize: MAX_MESSAGE_BYTES,
        ipv6: endpoint.includes('['),
        ...KEEPALIVE,
        ...(curve && { reconnectMaxInterval: SUBSCRIBER_RECONNECT_MAX_MS }),
      },
      curve,
    ),
  );
  return observed(socket);
}

/** The process's ZAP handler socket (see `security/zap-handler.ts`): inproc, answers libzmq itself. */
export function zapRouter(): Router {
  return new Router({ linger: 0 });
}
