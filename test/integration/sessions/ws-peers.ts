/**
 * WebSocket peers for the session listener's tests: a well-behaved client on the `ws` package (what a
 * browser does: one binary message per frame body), and raw TCP peers that write HTTP and WebSocket
 * frames by hand (for hostile input: bad handshakes, unmasked frames, fragmented control frames).
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { Packr } from 'msgpackr';
import WebSocket from 'ws';
import { waitFor, within } from '../../helpers/index.js';

export const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });

/** A session client over `ws`: frames out as binary messages, frames in decoded, its close seen. */
export class WsPeer {
  readonly ws: WebSocket;
  readonly frames: unknown[][] = [];
  /** The WebSocket close code and reason, once closed. */
  closed: { code: number; reason: string } | undefined;
  /** The HTTP status of a refused upgrade. */
  refusedWith: number | undefined;
  private readonly opened: Promise<void>;

  constructor(url: string, options: WebSocket.ClientOptions = {}) {
    this.ws = new WebSocket(url, { perMessageDeflate: false, ...options });
    this.ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.frames.push(packr.unpack(data) as unknown[]);
    });
    this.ws.on('error', () => undefined);
    this.ws.on('unexpected-response', (_req, res) => {
      this.refusedWith = res.statusCode;
      res.resume();
      this.ws.terminate();
    });
    this.ws.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('close', () => reject(new Error(`closed before open (${String(this.refusedWith)})`)));
    });
  }

  open(): Promise<void> {
    return within(this.opened, 5000, 'WebSocket open');
  }

  frame(items: unknown[]): void {
    this.ws.send(packr.pack(items));
  }

  /** Opens, says Hello and waits for the Welcome; resolves with the session id. */
  async hello(token: unknown = 'player'): Promise<string> {
    await this.open();
    this.frame([1, 1, token]);
    const welcome = await this.next((f) => f[0] === 2 || f[0] === 10);
    if (welcome[0] !== 2) throw new Error(`no Welcome: ${JSON.stringify(welcome)}`);
    return welcome[2] as string;
  }

  /** The first frame (seen or still to come) that `match` accepts, within 5 s. */
  async next(match: (f: unknown[]) => boolean, timeoutMs = 5000): Promise<unknown[]> {
    await waitFor(() => this.frames.some(match), timeoutMs, 'a frame from the listener');
    return this.frames.find(match) as unknown[];
  }

  /** A Request and its answer (Reply or Error). */
  async request(correlation: number, packet: string, payload: unknown): Promise<unknown[]> {
    this.frame([3, correlation, packet, payload]);
    return this.next((f) => (f[0] === 4 || f[0] === 5) && f[1] === correlation);
  }

  async waitClosed(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    await waitFor(() => this.closed !== undefined, timeoutMs, 'the WebSocket to close');
    return this.closed as { code: number; reason: string };
  }

  close(): void {
    this.ws.terminate();
  }
}

/** What a raw TCP peer got: the HTTP status line's code (if any), and everything after the headers. */
export interface RawAnswer {
  readonly status: number | undefined;
  readonly closed: boolean;
}

/**
 * A raw TCP connection that writes `request` (HTTP text or bytes) and reads until the listener closes
 * it (or `timeoutMs`): the status it answered with. Write errors (the listener closed first) are kept
 * quiet: the answer is what counts.
 */
export async function rawHttp(port: number, request: string | Buffer, timeoutMs = 5000): Promise<RawAnswer> {
  const socket = connect({ host: '127.0.0.1', port });
  let received = '';
  let closed = false;
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    if (received.length < 4096) received += chunk;
  });
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  socket.on('connect', () => socket.write(request));
  try {
    await waitFor(() => closed, timeoutMs, 'the listener to close a raw connection');
  } finally {
    socket.destroy();
  }
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(received);
  return { status: status ? Number(status[1]) : undefined, closed };
}

/** An upgrade request's text; `headers` replace or add to the good ones (a value `undefined` drops one). */
export function upgradeRequest(path = '/game', headers: Record<string, string | undefined> = {}): string {
  const all: Record<string, string | undefined> = {
    Host: '127.0.0.1',
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
    'Sec-WebSocket-Version': '13',
    ...headers,
  };
  const lines = Object.entries(all)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${v as string}`);
  return `GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/** How `wsFrame` writes a frame: by default FIN, masked, no RSV bit, the shortest length form. */
export interface WsFrameShape {
  readonly fin?: boolean;
  readonly mask?: boolean;
  /** RSV1-3 bits (0x40, 0x20, 0x10) set in the first byte. */
  readonly rsv?: number;
  /** The length field's form: 7 bits, 16 or 64 (a form longer than needed is legal to read). */
  readonly lengthForm?: 7 | 16 | 64;
  /** The length the header declares, when not the payload's (a header alone, or a lie). */
  readonly declared?: number;
}

/** One WebSocket frame as a client writes it: masked unless told otherwise, FIN unless told otherwise. */
export function wsFrame(
  opcode: number,
  payload: Uint8Array,
  { fin = true, mask = true, rsv = 0, lengthForm, declared = payload.length }: WsFrameShape = {},
): Buffer {
  const head: number[] = [(fin ? 0x80 : 0) | rsv | opcode];
  const maskBit = mask ? 0x80 : 0;
  const form = lengthForm ?? (declared < 126 ? 7 : declared < 65536 ? 16 : 64);
  if (form === 7) head.push(maskBit | declared);
  else if (form === 16) head.push(maskBit | 126, (declared >> 8) & 0xff, declared & 0xff);
  else {
    const high = Math.floor(declared / 0x100000000);
    head.push(maskBit | 127, (high >>> 24) & 0xff, (high >>> 16) & 0xff, (high >>> 8) & 0xff, high & 0xff);
    head.push((declared >>> 24) & 0xff, (declared >>> 16) & 0xff, (declared >>> 8) & 0xff, declared & 0xff);
  }
  const key = mask ? randomBytes(4) : Buffer.alloc(0);
  const body = Buffer.from(payload);
  if (mask) for (let i = 0; i < body.length; i++) body[i] = (body[i] as number) ^ (key[i % 4] as number);
  return Buffer.concat([Buffer.from(head), key, body]);
}

export const Opcode = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

/** A session frame body as one masked binary WebSocket frame. */
export const binaryFrame = (items: unknown[]): Buffer => wsFrame(Opcode.binary, packr.pack(items));

/**
 * A WebSocket client written by hand on a raw TCP socket: it upgrades, then writes whatever frames a
 * test gives it, and reads the listener's frames (unmasked, as a server writes them).
 */
export class RawWs {
  readonly socket: Socket;
  status: number | undefined;
  /** The listener's frames after the upgrade: opcode and payload. */
  readonly frames: { opcode: number; payload: Buffer }[] = [];
  closed = false;
  private buffer = Buffer.alloc(0);
  private upgraded = false;

  constructor(port: number, request = upgradeRequest()) {
    this.socket = connect({ host: '127.0.0.1', port });
    this.socket.on('connect', () => this.socket.write(request));
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => (this.closed = true));
  }

  private read(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (!this.upgraded) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.buffer.subarray(0, end).toString('latin1');
      this.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      this.buffer = this.buffer.subarray(end + 4);
      this.upgraded = true;
    }
    for (;;) {
      if (this.buffer.length < 2) return;
      const opcode = (this.buffer[0] as number) & 0x0f;
      let length = (this.buffer[1] as number) & 0x7f;
      let at = 2;
      if (length === 126) {
        if (this.buffer.length < 4) return;
        length = this.buffer.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) return;
        length = Number(this.buffer.readBigUInt64BE(2));
        at = 10;
      }
      if (this.buffer.length < at + length) return;
      this.frames.push({ opcode, payload: Buffer.from(this.buffer.subarray(at, at + length)) });
      this.buffer = this.buffer.subarray(at + length);
    }
  }

  async upgradedWith(timeoutMs = 5000): Promise<number | undefined> {
    await waitFor(() => this.status !== undefined || this.closed, timeoutMs, 'the upgrade answer');
    return this.status;
  }

  write(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** The listener's session frames (binary messages), decoded. */
  sessionFrames(): unknown[][] {
    return this.frames
      .filter((f) => f.opcode === Opcode.binary)
      .map((f) => packr.unpack(f.payload) as unknown[]);
  }

  /** The code of the listener's WebSocket close frame, once one came. */
  closeCode(): number | undefined {
    const close = this.frames.find((f) => f.opcode === Opcode.close);
    return close && close.payload.length >= 2 ? close.payload.readUInt16BE(0) : undefined;
  }

  async waitCloseCode(timeoutMs = 5000): Promise<number | undefined> {
    await waitFor(() => this.closeCode() !== undefined || this.closed, timeoutMs, 'a close frame');
    return this.closeCode();
  }

  close(): void {
    this.socket.destroy();
  }
}
