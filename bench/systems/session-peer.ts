/**
 * A lean game client of the session wire for the sessions bench (bench/sessions.ts), written from
 * docs/sessions-wire.md, on every listener kind: `tcp://` (node:net), `tls://` (node:tls, the test CA)
 * and `ws://` (the `ws` package: one binary message per frame body, no length prefix). One peer, one
 * connection, one session. Its frames of a turn leave in one write (a WebSocket's under a corked
 * socket), as the package's own client batches them; its requests are plain promises by correlation.
 * It can ask for resume, drop its connection without a Close, and resume on a new one.
 *
 * The same code for every kind, so the kinds' figures differ by their transport only; and lean, so the
 * client process (which shares the machine's cores with the gateway) takes as little as it can from
 * what is measured.
 */
import { Buffer } from 'node:buffer';
import { type Socket, connect as netConnect } from 'node:net';
import { type SecureContext, connect as tlsConnect } from 'node:tls';
import { Packr } from 'msgpackr';
import WebSocket from 'ws';

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true, variableMapSize: true });

/** The frame kinds (docs/sessions-wire.md#bodies). */
export const Kind = {
  Hello: 1,
  Welcome: 2,
  Request: 3,
  Reply: 4,
  Error: 5,
  Send: 6,
  Push: 7,
  Ping: 8,
  Pong: 9,
  Close: 10,
  Ack: 11,
} as const;

/** Where and how a peer connects. */
export interface PeerTarget {
  /** The listener's endpoint: `tcp://host:port`, `tls://host:port` or `ws://host:port/path`. */
  readonly url: string;
  /**
   * What a `tls://` listener's certificate is checked against (the CA): one context for every peer, as
   * a client holds one (a context per connection would parse the CA each time).
   */
  readonly secureContext?: SecureContext;
  /** The local address to connect from (a 127.0.0.x alias, for more 4-tuples than one address has). */
  readonly localAddress?: string;
}

/** What a Welcome said (the resume items only when the Hello asked for resume). */
export interface PeerWelcome {
  readonly sessionId: string;
  readonly token: string | undefined;
  readonly received: number | undefined;
}

interface Waiter {
  readonly resolve: (frame: unknown[]) => void;
  readonly reject: (error: Error) => void;
}

/** The transport under a peer: writes whole frame bodies, hands whole bodies up. */
interface PeerTransport {
  write(bodies: readonly Buffer[]): void;
  /** Ends the connection with no Close frame: what a lost network looks like. */
  destroy(): void;
  /** Ends the connection after what was written (a Close frame, say). */
  end(): void;
}

export class SessionPeer {
  private transport: PeerTransport | undefined;
  private out: Buffer[] = [];
  private flushQueued = false;
  private nextCorrelation = 1;
  private readonly waiters = new Map<number, Waiter>();
  private welcomeWaiter: Waiter | undefined;
  private pushWaiter: ((frame: unknown[]) => void) | undefined;
  private closedWaiters: (() => void)[] = [];
  private connected = false;
  /** Pushes received since the peer was made. */
  pushes = 0;
  /** Replies, Errors and Pushes received over the session's life (its resume count). */
  received = 0;
  welcome: PeerWelcome | undefined;

  constructor(private readonly target: PeerTarget) {}

  /** Connects (a TLS handshake or a WebSocket upgrade included), says Hello, resolves with the Welcome. */
  async open(resume?: readonly unknown[]): Promise<PeerWelcome> {
    this.transport = await this.connect();
    this.connected = true;
    const welcome = new Promise<unknown[]>((resolve, reject) => (this.welcomeWaiter = { resolve, reject }));
    this.frame(resume === undefined ? [Kind.Hello, 1, 'bench'] : [Kind.Hello, 1, 'bench', resume]);
    const f = await welcome;
    this.welcome = {
      sessionId: f[2] as string,
      token: f[6] as string | undefined,
      received: f[8] as number | undefined,
    };
    return this.welcome;
  }

  /** A Request; resolves with its Reply's payload, rejects with its Error (or the connection's end). */
  request(packet: string, payload: unknown): Promise<unknown> {
    const correlation = this.nextCorrelation++;
    if (this.nextCorrelation > 0x7fffffff) this.nextCorrelation = 1;
    this.frame([Kind.Request, correlation, packet, payload]);
    return new Promise<unknown[]>((resolve, reject) =>
      this.waiters.set(correlation, { resolve, reject }),
    ).then((f) => {
      if (f[0] === Kind.Reply) return f[2];
      throw new Error(`${String(f[2])}: ${String(f[3])}`);
    });
  }

  send(packet: string, payload: unknown): void {
    this.frame([Kind.Send, packet, payload]);
  }

  /** Resolves with the next Push (one seen already counts, if it was not waited for). */
  nextPush(timeoutMs: number): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no push within ${timeoutMs} ms`)), timeoutMs);
      this.pushWaiter = (f) => {
        clearTimeout(timer);
        resolve(f);
      };
    });
  }

  /** Drops the connection without a Close frame; the session waits on the gateway for a resume. */
  drop(): Promise<void> {
    const closed = this.closed();
    this.transport?.destroy();
    return closed;
  }

  /** Ends the session for good: a Close frame, then the connection; resolves once it is gone. */
  close(): Promise<void> {
    if (!this.connected) return Promise.resolve();
    const closed = this.closed();
    this.frame([Kind.Close, 1000, '']);
    this.flush();
    this.transport?.end();
    return closed;
  }

  private closed(): Promise<void> {
    return this.connected ? new Promise((resolve) => this.closedWaiters.push(resolve)) : Promise.resolve();
  }

  private frame(items: readonly unknown[]): void {
    this.out.push(packr.pack(items));
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.flushQueued = false;
    if (this.out.length === 0) return;
    const out = this.out;
    this.out = [];
    this.transport?.write(out);
  }

  private body(body: Buffer): void {
    const f = packr.unpack(body) as unknown[];
    switch (f[0]) {
      case Kind.Reply:
      case Kind.Error: {
        this.received++;
        const waiter = this.waiters.get(f[1] as number);
        this.waiters.delete(f[1] as number);
        return waiter?.resolve(f);
      }
      case Kind.Push: {
        this.received++;
        this.pushes++;
        const waiter = this.pushWaiter;
        this.pushWaiter = undefined;
        return waiter?.(f);
      }
      case Kind.Welcome:
        return this.welcomeWaiter?.resolve(f);
      case Kind.Close:
        return this.welcomeWaiter?.reject(new Error(`closed ${String(f[1])}: ${String(f[2])}`));
    }
  }

  private gone(): void {
    if (!this.connected) return;
    this.connected = false;
    const error = new Error('the connection ended');
    this.welcomeWaiter?.reject(error);
    for (const w of this.waiters.values()) w.reject(error);
    this.waiters.clear();
    for (const resolve of this.closedWaiters.splice(0)) resolve();
  }

  private connect(): Promise<PeerTransport> {
    const url = new URL(this.target.url);
    if (url.protocol === 'ws:' || url.protocol === 'wss:') return this.websocket(url);
    return this.stream(url);
  }

  /** `tcp://` and `tls://`: a byte stream of length-prefixed frames (docs/sessions-wire.md#framing). */
  private stream(url: URL): Promise<PeerTransport> {
    const { localAddress, secureContext } = this.target;
    const host = url.hostname;
    const port = Number(url.port);
    const tcp = netConnect({ host, port, localAddress });
    const socket: Socket =
      url.protocol === 'tls:' ? tlsConnect({ socket: tcp, secureContext, servername: 'localhost' }) : tcp;
    // Under TLS the TCP socket's own errors reach the TLS socket too.
    if (socket !== tcp) tcp.on('error', () => undefined);
    socket.setNoDelay(true);
    let rest: Buffer | undefined;
    socket.on('data', (chunk: Buffer) => {
      let buf = rest === undefined ? chunk : Buffer.concat([rest, chunk]);
      let at = 0;
      while (buf.length - at >= 4) {
        const n = buf.readUInt32BE(at);
        if (buf.length - at - 4 < n) break;
        this.body(buf.subarray(at + 4, at + 4 + n));
        at += 4 + n;
      }
      buf = buf.subarray(at);
      rest = buf.length > 0 ? buf : undefined;
    });
    return new Promise((resolve, reject) => {
      socket.once(url.protocol === 'tls:' ? 'secureConnect' : 'connect', () => {
        socket.off('error', reject);
        socket.on('error', () => undefined);
        socket.on('close', () => this.gone());
        resolve({
          write: (bodies) => {
            let bytes = 0;
            for (const b of bodies) bytes += 4 + b.length;
            const joined = Buffer.allocUnsafe(bytes);
            let at = 0;
            for (const b of bodies) {
              joined.writeUInt32BE(b.length, at);
              joined.set(b, at + 4);
              at += 4 + b.length;
            }
            socket.write(joined);
          },
          destroy: () => socket.destroy(),
          end: () => socket.end(),
        });
      });
      socket.once('error', reject);
    });
  }

  /** `ws://` (no `wss://`: the bench's WebSocket listener is plain): one binary message per frame body (docs/sessions-wire.md#websocket). */
  private websocket(url: URL): Promise<PeerTransport> {
    const ws = new WebSocket(url, { perMessageDeflate: false, localAddress: this.target.localAddress });
    ws.binaryType = 'nodebuffer';
    ws.on('message', (data: Buffer) => this.body(data));
    return new Promise((resolve, reject) => {
      ws.once('open', () => {
        ws.off('error', reject);
        ws.on('error', () => undefined);
        ws.on('close', () => this.gone());
        // `ws` keeps its socket private; corked, a turn's messages leave in one write.
        const socket = (ws as unknown as { _socket?: Socket })._socket;
        resolve({
          write: (bodies) => {
            socket?.cork();
            for (const b of bodies) ws.send(b, { binary: true });
            socket?.uncork();
          },
          destroy: () => ws.terminate(),
          end: () => ws.close(1000),
        });
      });
      ws.once('error', reject);
    });
  }
}
