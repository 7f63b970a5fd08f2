import { connect, type Socket } from 'node:net';
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls';
import { Packr } from 'msgpackr';
import { MemoryLocationStore, type ZLinkOptions, ZLinkRuntime } from '../../../lib/index.js';
import type { HandlerFn, SessionHookRegistration } from '../../../lib/core/index.js';
import { objectMeshOptions } from '../spot/harness.js';

/** One gateway runtime with a session listener `game` on its object mesh (in-process Location Store). */
export function gatewayOptions(
  listener: Record<string, unknown> = {},
  extra: Partial<ZLinkOptions> = {},
): ZLinkOptions {
  return {
    ...objectMeshOptions(
      new MemoryLocationStore(),
      'server',
      `gw-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    ),
    sessions: { game: { listen: { bindHost: '127.0.0.1', port: 0 }, mesh: 'objects', ...listener } },
    ...extra,
  } as ZLinkOptions;
}

export interface GatewaySetup {
  readonly handlers?: Record<string, { kind?: 'request' | 'send'; fn: HandlerFn }>;
  readonly onOpen?: Extract<SessionHookRegistration, { hook: 'open' }>['fn'];
  readonly onClose?: Extract<SessionHookRegistration, { hook: 'close' }>['fn'];
  readonly onDropped?: Extract<SessionHookRegistration, { hook: 'dropped' }>['fn'];
  readonly onResumed?: Extract<SessionHookRegistration, { hook: 'resumed' }>['fn'];
}

export async function startGateway(options: ZLinkOptions, setup: GatewaySetup = {}): Promise<ZLinkRuntime> {
  const runtime = new ZLinkRuntime(options);
  for (const [packet, h] of Object.entries(setup.handlers ?? {}))
    runtime.sessions.registerHandler({
      listener: 'game',
      kind: h.kind ?? 'request',
      packet,
      handler: h.fn,
      source: packet,
    });
  if (setup.onOpen)
    runtime.sessions.registerHook({ listener: 'game', hook: 'open', fn: setup.onOpen, source: 'onOpen' });
  if (setup.onClose)
    runtime.sessions.registerHook({ listener: 'game', hook: 'close', fn: setup.onClose, source: 'onClose' });
  if (setup.onDropped)
    runtime.sessions.registerHook({
      listener: 'game',
      hook: 'dropped',
      fn: setup.onDropped,
      source: 'onDropped',
    });
  if (setup.onResumed)
    runtime.sessions.registerHook({
      listener: 'game',
      hook: 'resumed',
      fn: setup.onResumed,
      source: 'onResumed',
    });
  await runtime.start();
  return runtime;
}

export function portOf(runtime: ZLinkRuntime, listener = 'game'): number {
  return Number(new URL(runtime.sessions.localEndpoint(listener) as string).port);
}

/** The bound port of each of a listener's entries, in order (their local endpoints are URLs). */
export function portsOf(runtime: ZLinkRuntime, listener = 'game'): number[] {
  return runtime.sessions.localEndpoints(listener).map((url) => Number(new URL(url).port));
}

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });

/**
 * A raw TCP peer that speaks the wire by hand (for hostile input): frames out, frames in, close seen.
 * With `tls` (e.g. `{ ca }`), the same inside TLS to 127.0.0.1. With `prefix`, those bytes go first on
 * the TCP connection, before the TLS handshake if any (a load balancer's PROXY header).
 */
export class RawPeer {
  readonly socket: Socket;
  readonly frames: unknown[][] = [];
  closed = false;
  private buffer = Buffer.alloc(0);

  constructor(
    port: number,
    private readonly tls?: ConnectionOptions,
    prefix?: Uint8Array,
  ) {
    const tcp = prefix ? connect({ host: '127.0.0.1', port }) : undefined;
    if (tcp && prefix) tcp.write(prefix);
    this.socket = tls
      ? tlsConnect({ host: '127.0.0.1', port, ...(tcp && { socket: tcp }), ...tls })
      : (tcp ?? connect({ host: '127.0.0.1', port }));
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      while (this.buffer.length >= 4) {
        const n = this.buffer.readUInt32BE(0);
        if (this.buffer.length < 4 + n) break;
        this.frames.push(packr.unpack(this.buffer.subarray(4, 4 + n)) as unknown[]);
        this.buffer = this.buffer.subarray(4 + n);
      }
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => (this.closed = true));
  }

  /** Connected (over TLS: the handshake done). */
  ready(): Promise<void> {
    return new Promise((resolve) =>
      this.socket.once(this.tls ? 'secureConnect' : 'connect', () => resolve()),
    );
  }

  frame(items: unknown[]): void {
    this.raw(frameOf(packr.pack(items)));
  }

  raw(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** The Close frame the server sent, if any. */
  closeFrame(): unknown[] | undefined {
    return this.frames.find((f) => f[0] === 10);
  }

  close(): void {
    this.socket.destroy();
  }
}

export function frameOf(body: Uint8Array): Buffer {
  const out = Buffer.alloc(4 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.set(body, 4);
  return out;
}
