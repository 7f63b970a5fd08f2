/**
 * A session client written by hand for hostile input on any listener kind (`tcp`, `tls`, `websocket`):
 * it opens the connection as the kind's clients do (TCP; TLS over a TCP socket it keeps; a WebSocket
 * upgrade), then writes whatever bytes a test gives it, and counts what the listener sends back by
 * session frame kind without keeping it (a fuzz opens thousands, a flood reads millions of bytes).
 */
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Packr } from 'msgpackr';
import { frameOf } from './harness.js';
import { Opcode, upgradeRequest, wsFrame } from './ws-peers.js';

export type SessionKind = 'tcp' | 'tls' | 'websocket';

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });

/** Where a hostile session connects: a listener entry's local URL, and the CA a TLS client trusts. */
export interface HostileTarget {
  readonly kind: SessionKind;
  readonly port: number;
  /** The WebSocket path (`/` unless the URL says otherwise). */
  readonly path: string;
  readonly ca?: string;
}

/** A target from a listener entry's local URL (`tcp://`, `tls://`, `ws://`). */
export function hostileTarget(url: string, ca?: string): HostileTarget {
  const u = new URL(url);
  const scheme = u.protocol.slice(0, -1);
  const kind: SessionKind = scheme === 'ws' ? 'websocket' : (scheme as SessionKind);
  return { kind, port: Number(u.port), path: u.pathname || '/', ...(ca !== undefined && { ca }) };
}

/** A session frame body as the kind carries it: length-prefixed on a byte stream, one binary message on a WebSocket. */
export function carried(kind: SessionKind, body: Uint8Array): Buffer {
  return kind === 'websocket' ? wsFrame(Opcode.binary, body) : frameOf(body);
}

export class HostileSession {
  /** The TCP connection (under TLS on `tls`). */
  readonly tcp: Socket;
  /** Where the session's bytes go: the TLS socket on `tls`, the TCP one otherwise. */
  readonly socket: Socket;
  /** Session frames received, by kind (2 Welcome, 9 Pong, 10 Close, ...). */
  readonly received = new Map<number, number>();
  /** The code of the listener's session Close frame, or of its WebSocket close. */
  closeCode: number | undefined;
  /** The listener's WebSocket close came: it waits for the client's (up to a heartbeat), then closes. */
  wsClosed = false;
  /** The HTTP status of the upgrade's answer (`websocket`). */
  status: number | undefined;
  bytesIn = 0;
  closed = false;
  private connected = false;
  private rest: Buffer = Buffer.alloc(0);
  private upgraded: boolean;
  /** Waits for something the listener sends or does: checked at every chunk and at the close. */
  private readonly waits = new Set<() => void>();

  constructor(
    readonly target: HostileTarget,
    { handshake = true }: { handshake?: boolean } = {},
  ) {
    const { kind, port, path, ca } = target;
    this.tcp = connect({ host: '127.0.0.1', port });
    this.tcp.on('error', () => undefined);
    this.upgraded = kind !== 'websocket';
    this.socket =
      kind === 'tls' && handshake
        ? tlsConnect({ socket: this.tcp, host: '127.0.0.1', ...(ca !== undefined && { ca }) })
        : this.tcp;
    this.socket.on('error', () => undefined);
    const gone = (): void => {
      this.closed = true;
      this.wake();
    };
    this.socket.on('close', gone);
    this.tcp.on('close', gone);
    this.socket.once(this.socket === this.tcp ? 'connect' : 'secureConnect', () => {
      if (kind === 'websocket' && handshake) this.tcp.write(upgradeRequest(path));
      else this.connected = true;
      this.wake();
    });
    // Without a handshake the bytes are the test's to read: none are taken for the session's.
    if (handshake || kind !== 'websocket') this.socket.on('data', (chunk: Buffer) => this.read(chunk));
  }

  /** Connected: TCP up, the TLS handshake done, the WebSocket upgraded (within `timeoutMs`, or it throws). */
  async ready(timeoutMs = 5000): Promise<this> {
    await this.until(() => this.connected || this.closed, timeoutMs, `a ${this.target.kind} connection`);
    if (!this.connected) throw new Error(`${this.target.kind} connection closed before it was up`);
    return this;
  }

  /** Writes a session frame body as the kind carries it. */
  frame(items: unknown[]): void {
    this.write(carried(this.target.kind, packr.pack(items)));
  }

  /** Writes bytes as they are: on `tls` inside TLS; on a WebSocket after the upgrade, as raw TCP. */
  write(bytes: Uint8Array): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  /** Writes bytes on the TCP connection itself, under any TLS. */
  writeTcp(bytes: Uint8Array): void {
    if (!this.tcp.destroyed) this.tcp.write(bytes);
  }

  /** Connects, says Hello and waits for the Welcome; rejects when the listener refused it. */
  async hello(token: unknown = 'hostile', timeoutMs = 5000): Promise<this> {
    await this.ready(timeoutMs);
    this.frame([1, 1, token]);
    await this.until(() => this.count(2) > 0 || this.closed, timeoutMs, 'a Welcome');
    if (this.count(2) === 0) throw new Error(`no Welcome (close code ${String(this.closeCode)})`);
    return this;
  }

  count(kind: number): number {
    return this.received.get(kind) ?? 0;
  }

  /** The listener ended the connection: closed it, or (on a WebSocket) sent its close. */
  get ended(): boolean {
    return this.closed || this.wsClosed;
  }

  /** Whether the listener ended the connection within `timeoutMs`. */
  async endedWithin(timeoutMs: number): Promise<boolean> {
    await this.until(() => this.ended, timeoutMs, 'the end').catch(() => undefined);
    return this.ended;
  }

  /** Resolves once `predicate` holds (checked at each chunk received and at the close); rejects after `timeoutMs`. */
  until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.waits.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waits.delete(check);
        reject(new Error(`${this.target.kind}: ${what} not within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waits.add(check);
    });
  }

  private wake(): void {
    for (const check of [...this.waits]) check();
  }

  /** Stops reading: the listener's bytes stay in the kernels' buffers. */
  pause(): void {
    this.socket.pause();
  }

  /** Half-closes: on `tls` after its close_notify. */
  end(): void {
    this.socket.end();
  }

  /** Resets the TCP connection. */
  reset(): void {
    if (!this.tcp.destroyed) this.tcp.resetAndDestroy();
    this.socket.destroy();
  }

  close(): void {
    this.socket.destroy();
    this.tcp.destroy();
  }

  private read(chunk: Buffer): void {
    this.bytesIn += chunk.length;
    let buffer = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
    if (!this.upgraded) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return void (this.rest = buffer);
      this.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(buffer.subarray(0, end).toString('latin1'))?.[1]);
      this.upgraded = true;
      this.connected = this.status === 101;
      buffer = buffer.subarray(end + 4);
      if (!this.connected) return this.wake();
    }
    let at = 0;
    for (;;) {
      const next =
        this.target.kind === 'websocket' ? this.wsMessage(buffer, at) : this.streamFrame(buffer, at);
      if (next < 0) break;
      at = next;
    }
    // What remains is part of one frame: a copy, so the chunk it came in is not kept.
    this.rest = at === buffer.length ? Buffer.alloc(0) : Buffer.from(buffer.subarray(at));
    this.wake();
  }

  /** Reads one length-prefixed frame at `at`; returns where the next starts, or -1 when incomplete. */
  private streamFrame(buffer: Buffer, at: number): number {
    if (buffer.length - at < 4) return -1;
    const end = at + 4 + buffer.readUInt32BE(at);
    if (buffer.length < end) return -1;
    this.body(buffer.subarray(at + 4, end));
    return end;
  }

  /** Reads one WebSocket frame as a server writes it (unmasked) at `at`; as `streamFrame`. */
  private wsMessage(buffer: Buffer, at: number): number {
    if (buffer.length - at < 2) return -1;
    const opcode = (buffer[at] as number) & 0x0f;
    let length = (buffer[at + 1] as number) & 0x7f;
    let start = at + 2;
    if (length === 126) {
      if (buffer.length - at < 4) return -1;
      length = buffer.readUInt16BE(at + 2);
      start = at + 4;
    } else if (length === 127) {
      if (buffer.length - at < 10) return -1;
      length = Number(buffer.readBigUInt64BE(at + 2));
      start = at + 10;
    }
    if (buffer.length < start + length) return -1;
    const payload = buffer.subarray(start, start + length);
    if (opcode === Opcode.binary) this.body(payload);
    else if (opcode === Opcode.close) {
      this.wsClosed = true;
      if (payload.length >= 2) this.closeCode ??= payload.readUInt16BE(0);
    }
    return start + length;
  }

  /** Counts a session frame body by its kind (a fixarray's first item); a Close frame's code is read. */
  private body(body: Buffer): void {
    const kind = body.length >= 2 && (body[0] as number) >> 4 === 0x9 ? (body[1] as number) : -1;
    this.received.set(kind, (this.received.get(kind) ?? 0) + 1);
    if (kind === 10) this.closeCode ??= (packr.unpack(body) as [number, number])[1];
  }
}
