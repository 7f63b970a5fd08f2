import { Buffer } from 'node:buffer';
import {
  type IncomingMessage,
  type Server as HttpServer,
  type ServerOptions as HttpServerOptions,
  type ServerResponse,
  createServer as createHttpServer,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { type ServerOptions as WsServerOptions, WebSocket, WebSocketServer } from 'ws';
import type { SessionListenerSnapshot, UpgradeRefusal } from '../../core/observe/index.js';
import type { RemoteAddress } from '../../core/kinds.js';
import { FORWARDED_REFUSALS, RefusalCounts, clientOfUpgrade } from '../address/index.js';
import { FRAME_HEADER_BYTES, type SessionCloseReason } from '../../core/wire/index.js';
import { type NormalizedSessionListen, secureContextOptions } from '../../core/options/index.js';
import { type SessionListenerConfig, SessionListenerBase, resetSocket } from '../session/index.js';
import {
  MAX_MESSAGE_FRAGMENTS,
  MAX_UPGRADE_HEADER_BYTES,
  type UpgradeAnswer,
  type UpgradeRule,
  WebSocketClose,
  clientErrorAnswer,
  refusalResponse,
  refusalText,
  upgradeRefusal,
  upgradeRule,
  webSocketCloseOf,
} from './upgrade-rules.js';
import { WsConnection } from './ws-connection.js';

/** `ws` 8.23's server options that its types (8.18) do not name yet. */
interface WsLimits extends WsServerOptions {
  closeTimeout?: number;
  maxFragments?: number;
  maxBufferedChunks?: number;
  maxPendingAutoPongs?: number;
}

/** A connection not upgraded yet: when it came, its deadline, and whether it was answered already. */
interface Waiting {
  readonly acceptedAt: number;
  readonly timer: NodeJS.Timeout;
  answered: boolean;
}

const SEND = { binary: true } as const;

function noRefusals(): Record<UpgradeRefusal, number> {
  return {
    path: 0,
    origin: 0,
    method: 0,
    handshake: 0,
    headersTooLarge: 0,
    forwardedFor: 0,
    notUpgrade: 0,
    malformed: 0,
    timeout: 0,
    tls: 0,
  };
}

/**
 * An end-user session listener for browsers (docs/sessions.md#websocket): WebSocket (`ws`) on a
 * `node:http` server, or `node:https` for `wss`, with the same frames, states and rules as the other
 * listeners (`SessionListenerBase`). One binary message is one frame body, with no length prefix.
 *
 * The upgrade is the listener's own (`noServer`): a wrong path, an Origin not allowed, headers over
 * 16 KiB, a plain HTTP request, a bad handshake are each answered over HTTP, the connection closed and
 * the refusal counted (`upgradeRefusals`); a connection not upgraded within `helloTimeoutMs` is closed
 * (and the Hello must come within the same time from the TCP accept). A text message closes the
 * WebSocket 1003, a message over `maxFrameBytes` 1009 (`ws` reads no further than its header);
 * other faults close the session as on every listener, its Close frame first. A message counts as
 * heard once whole, and its bytes (and the control frames') as a stream's do until then
 * (docs/sessions.md#idle-timeout).
 *
 * Writes are batched per turn and connection: the turn's frames go to `ws` with the socket corked, so
 * they leave in one write. Backpressure is the socket's own: once it holds more than its high-water
 * mark, frames wait here until its `'drain'`; what waits here and what `ws` and the socket hold
 * (`bufferedAmount`) count together toward `maxPendingBytes`, and a slow consumer is reset at once.
 */
export class WebSocketSessionListener extends SessionListenerBase<WsConnection> {
  private readonly server: HttpServer;
  private readonly wss: WebSocketServer;
  private readonly rule: UpgradeRule;
  /** Every TCP socket not yet closed, upgraded or not: `close` destroys them all. */
  private readonly sockets = new Set<Socket>();
  /** Connections (HTTP's sockets: the TLS socket on `wss`) not upgraded yet. */
  private readonly waiting = new Map<Socket, Waiting>();
  private readonly refusals = noRefusals();
  /** `X-Forwarded-For` headers not believed (from an untrusted peer) or refused (a trusted one's, unread). */
  private readonly forwardedRefusals = new RefusalCounts(FORWARDED_REFUSALS);
  private nextKey = 0;

  constructor(config: SessionListenerConfig, entry: NormalizedSessionListen) {
    super(config, entry);
    const { helloTimeoutMs, heartbeatMs, maxFrameBytes } = config.options;
    this.rule = upgradeRule(entry.path, entry.origins);
    const http: HttpServerOptions = {
      maxHeaderSize: MAX_UPGRADE_HEADER_BYTES,
      // Node's own bounds on a request that trickles in; the listener's deadline (`awaitUpgrade`) is
      // the same length and also covers a connection that sends nothing.
      headersTimeout: helloTimeoutMs,
      requestTimeout: helloTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, helloTimeoutMs / 4)),
      // A refusal the listener does not count would be one it cannot tell about: it reads no Host.
      requireHostHeader: false,
      noDelay: true,
      keepAlive: true,
      keepAliveInitialDelay: heartbeatMs,
    };
    const { tls } = entry;
    this.server = tls
      ? createHttpsServer({
          ...http,
          ...secureContextOptions(tls),
          handshakeTimeout: helloTimeoutMs,
        })
      : createHttpServer(http);
    const limits: WsLimits = {
      noServer: true,
      clientTracking: false,
      maxPayload: maxFrameBytes,
      perMessageDeflate: entry.perMessageDeflate,
      // Text is refused whatever it holds (1003), so its UTF-8 is never checked.
      skipUTF8Validation: true,
      closeTimeout: heartbeatMs,
      maxFragments: MAX_MESSAGE_FRAGMENTS,
      // Chunks of a message still arriving: enough for a whole maxFrameBytes in small TCP segments.
      maxBufferedChunks: Math.max(1024, Math.ceil(maxFrameBytes / 512)),
      // The pongs `ws` writes by itself answer to maxPendingBytes as every write does (see `opened`),
      // not to a count of their own, which ended a client flooding pings as if it had gone.
      maxPendingAutoPongs: 0,
    };
    this.wss = new WebSocketServer(limits);
    // `ws` found the handshake bad (Upgrade, Sec-WebSocket-Key, -Version, -Extensions): counted here.
    this.wss.on('wsClientError', (_error, socket) => this.refuse(socket as Socket, 400, 'handshake'));
    this.server.on('connection', (socket: Socket) => this.connected(socket));
    this.server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => this.awaitUpgrade(socket));
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => this.plainRequest(req, res));
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) =>
      this.upgrade(req, socket, head),
    );
    this.server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
      const answer = clientErrorAnswer(error.code);
      if (answer) this.refuse(socket, answer.status, answer.reason);
      else socket.destroy();
    });
    if (tls)
      this.server.on('tlsClientError', (_error: Error, socket: Socket) => {
        this.refusals.tls++;
        socket.destroy();
      });
  }

  /** Binds and starts accepting; rejects when the address cannot be bound. */
  async bind(): Promise<void> {
    const { host, port } = this.address.bindTarget;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host, port }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    // Past the bind, a server error (EMFILE at an accept, say) leaves the listener as it is.
    this.server.on('error', () => {});
    this.address.boundAt((this.server.address() as AddressInfo).port);
    this.listening();
  }

  override snapshot(): SessionListenerSnapshot {
    return {
      ...super.snapshot(),
      upgradeRefusals: { ...this.refusals },
      proxyRefusals: this.forwardedRefusals.snapshot(),
    };
  }

  /** A TCP connection: known until it closes, so `close` can end it. */
  private connected(socket: Socket): void {
    if (this.closed) return void socket.destroy();
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** A connection HTTP reads: it must upgrade within `helloTimeoutMs`, or it is closed. */
  private awaitUpgrade(socket: Socket): void {
    if (this.closed) return void socket.destroy();
    const timer = setTimeout(() => this.overdue(socket), this.config.options.helloTimeoutMs);
    timer.unref();
    this.waiting.set(socket, { acceptedAt: Date.now(), timer, answered: false });
    socket.once('close', () => {
      clearTimeout(timer);
      this.waiting.delete(socket);
    });
  }

  private overdue(socket: Socket): void {
    const waiting = this.waiting.get(socket);
    if (!waiting) return;
    // Node's own request timeout may still report it before the socket's close: counted once.
    if (!waiting.answered) this.refusals.timeout++;
    waiting.answered = true;
    socket.destroy();
  }

  /** A plain HTTP request (no upgrade): 426, and the connection closed. */
  private plainRequest(req: IncomingMessage, res: ServerResponse): void {
    const waiting = this.waiting.get(req.socket);
    if (waiting && !waiting.answered) {
      waiting.answered = true;
      this.refusals.notUpgrade++;
    }
    const body = `${refusalText('notUpgrade', this.entry.path)}\n`;
    res.writeHead(426, {
      Connection: 'close',
      Upgrade: 'websocket',
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const refused: UpgradeAnswer | undefined = upgradeRefusal(
      req.method,
      req.url,
      req.headers.origin,
      this.rule,
    );
    if (refused) return this.refuse(socket, refused.status, refused.reason);
    // Whose session it is: the peer, or the client a trusted proxy names (counted in `proxyRefusals`).
    const who = clientOfUpgrade(req, this.entry.trustedProxies, this.forwardedRefusals);
    if (who.refused === 'gone') return void socket.destroy();
    if (who.refused !== undefined) return this.refuse(socket, 400, 'forwardedFor');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.opened(ws, socket, who.client));
  }

  /**
   * Answers a connection over HTTP and closes it, counted once by `reason` (a second fault of the
   * same connection only closes it). What the client still sends is read and dropped until it closes
   * its side or the connection's deadline comes: a reset with its bytes unread could make the client's
   * kernel drop the answer before the client read it.
   */
  private refuse(socket: Socket, status: number, reason: UpgradeRefusal): void {
    const waiting = this.waiting.get(socket);
    if (waiting?.answered) return void socket.destroy();
    if (waiting) waiting.answered = true;
    else socket.once('finish', () => socket.destroy());
    this.refusals[reason]++;
    if (socket.destroyed || !socket.writable) return void socket.destroy();
    socket.once('end', () => socket.destroy());
    socket.resume();
    const extra = status === 405 ? ['Allow: GET'] : [];
    socket.end(refusalResponse(status, refusalText(reason, this.entry.path), extra));
  }

  /** The upgrade is done: a session connection on the WebSocket, its Hello due from the TCP accept. */
  private opened(ws: WebSocket, socket: Socket, client: RemoteAddress): void {
    const waiting = this.waiting.get(socket);
    if (waiting) {
      clearTimeout(waiting.timer);
      this.waiting.delete(socket);
    }
    const key = String(++this.nextKey);
    const connection = new WsConnection(ws, socket, this, waiting?.acceptedAt ?? Date.now(), client);
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      this.framesIn++;
      if (isBinary) return connection.receiveBody(data, Date.now());
      connection.closeCode = WebSocketClose.unsupportedData;
      connection.close('protocolError', 'a text message: the session wire is binary');
    });
    // `ws` tells of a message once it is whole: until then its bytes count as a stream's do, and so
    // do the pings a client may slip between its fragments, which kept a message trickling in a
    // fragment at a time open for ever when a ping counted as a frame heard
    // (docs/sessions.md#idle-timeout, net-hostile.spec.ts).
    socket.on('data', (chunk: Buffer) => connection.heardBytes(chunk.length, Date.now()));
    // `ws` has written its pong before this event, and that write answers to maxPendingBytes like the
    // session's own. Without this, a client flooding pings and reading nothing was ended by `ws` after
    // 60 unanswered pongs, counted as a client that went away (`normal`), never as the `slowConsumer`
    // it is (net-hostile.spec.ts).
    ws.on('ping', () => this.overPending(connection));
    // `ws` refused what the client sent (a message over maxFrameBytes, a protocol violation) and
    // closed the WebSocket with its code (1009, 1002): the session ends with it.
    ws.on('error', (error: Error & { code?: string }) =>
      connection.finish(
        error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'frameTooLarge' : 'protocolError',
        `WebSocket: ${error.message}`,
        true,
      ),
    );
    ws.on('close', () => {
      connection.finish('normal', 'the connection is gone', true);
      this.connections.delete(key);
    });
    socket.on('drain', () => {
      connection.blocked = false;
      this.flushConnection(connection);
    });
    this.accepted(key, connection);
  }

  protected enqueue(connection: WsConnection, frame: Buffer): void {
    connection.out.push(frame);
    connection.outBytes += frame.length;
  }

  /** The turn's frames, each one binary message without its length prefix, in one write. */
  protected flushConnection(connection: WsConnection): void {
    const { out, ws, socket } = connection;
    if (connection.blocked || out.length === 0 || ws.readyState !== WebSocket.OPEN) return;
    connection.out = [];
    connection.outBytes = 0;
    socket.cork();
    for (const frame of out) ws.send(frame.subarray(FRAME_HEADER_BYTES), SEND);
    socket.uncork();
    if (socket.writableNeedDrain) connection.blocked = true;
  }

  /**
   * Ends the WebSocket; what still waits here is dropped. A slow consumer's TCP connection is reset at
   * once. Any other end sends the WebSocket close (after the session Close frame, already written):
   * `ws` waits up to a heartbeat for the client's, then destroys the socket.
   */
  protected terminate(connection: WsConnection, reason: SessionCloseReason): void {
    connection.out = [];
    connection.outBytes = 0;
    const { ws, socket } = connection;
    if (reason === 'slowConsumer') return resetSocket(socket);
    if (ws.readyState === WebSocket.OPEN) ws.close(connection.closeCode ?? webSocketCloseOf(reason), reason);
  }

  protected async closeSocket(): Promise<void> {
    this.wss.close();
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    for (const socket of this.waiting.keys()) socket.destroy();
    for (const connection of this.connections.values()) connection.socket.destroy();
    await stopped;
  }
}
