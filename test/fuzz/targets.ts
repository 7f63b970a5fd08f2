/**
 * The raw sockets the frame fuzz (frames.spec.ts) attacks live runtimes with, and the loop that
 * feeds them. Unlike the integration harnesses' fakes, these keep nothing they receive (only
 * counts), so the heap measured around a million inputs is the runtime's, not the test's.
 */
import * as zmq from 'zeromq';
import {
  type MeshNodeState,
  type ZLinkEvents,
  RecordKind,
  decodeFrame,
  encodeMeshState,
  encodeReply,
  encodeServerState,
} from '../../lib/core/index.js';
import type { FuzzInput } from './generator.js';

const LOCAL = '127.0.0.1';

/** Every counted event of a runtime, once each (`delivery:<result>` keys repeat `delivery`). */
export function eventTotal(events: ZLinkEvents): number {
  let total = 0;
  for (const [key, n] of events.counts) if (!key.includes(':')) total += n;
  return total;
}

/** What a runtime counted since `base` (a copy of `events.counts`), largest first: `protocol_error 1234, delivery:drop 56`. */
export function countedSince(events: ZLinkEvents, base: ReadonlyMap<string, number>): string {
  return [...events.counts]
    .map(([key, n]) => [key, n - (base.get(key) ?? 0)] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => `${key} ${n}`)
    .join(', ');
}

/** Reads and counts whatever arrives, until the socket closes. */
async function drain(socket: zmq.Dealer | zmq.Router, onMessage: (message: Buffer[]) => void): Promise<void> {
  for (;;) {
    let message: Buffer[];
    try {
      message = await socket.receive();
    } catch {
      return;
    }
    onMessage(message);
  }
}

/** Raw DEALERs connected to a ClientServer listener: each input goes out on the next one. */
export class HostileDealers {
  private readonly dealers: zmq.Dealer[];
  private readonly loops: Promise<void>[];
  private next = 0;
  /** Messages the listener sent back (welcomes, error replies, replies). */
  received = 0;

  constructor(endpoint: string, count: number) {
    this.dealers = Array.from({ length: count }, () => new zmq.Dealer({ linger: 0 }));
    for (const d of this.dealers) d.connect(endpoint);
    this.loops = this.dealers.map((d) => drain(d, () => this.received++));
  }

  send(frames: Buffer[]): Promise<void> {
    const dealer = this.dealers[this.next++ % this.dealers.length] as zmq.Dealer;
    return dealer.send(frames);
  }

  async close(): Promise<void> {
    for (const d of this.dealers) if (!d.closed) d.close();
    await Promise.all(this.loops);
  }
}

/**
 * A raw ROUTER standing in for the server of a real ClientServer client: it answers the client's
 * hello with `welcome` (once), answers requests by echoing their payload while `answering`, and
 * otherwise sends whatever the fuzz gives it. `mandatory`: a full queue waits instead of dropping,
 * so every input reaches the client.
 */
export class FakeServerSocket {
  private readonly router = new zmq.Router({ linger: 0, mandatory: true });
  private loop: Promise<void> | undefined;
  private client: Buffer | undefined;
  endpoint = '';
  answering = false;
  received = 0;

  constructor(private readonly welcome: Parameters<typeof encodeServerState>[1]) {}

  async bind(): Promise<this> {
    await this.router.bind(`tcp://${LOCAL}:*`);
    this.endpoint = this.router.lastEndpoint as string;
    this.loop = drain(this.router, (message) => void this.onMessage(message));
    return this;
  }

  get clientId(): Buffer | undefined {
    return this.client;
  }

  send(frames: Buffer[]): Promise<void> {
    return this.router.send([this.client as Buffer, ...frames]);
  }

  private async onMessage(message: Buffer[]): Promise<void> {
    this.received++;
    const [id, frame] = message as [Buffer, Buffer | undefined];
    if (frame === undefined) return;
    for (const record of decodeFrame(frame).records) {
      if (record.kind === RecordKind.Hello && this.client === undefined) {
        this.client = Buffer.from(id);
        await this.router.send([id, Buffer.from(encodeServerState(RecordKind.Welcome, this.welcome))]);
      } else if (record.kind === RecordKind.Request && this.answering) {
        await this.router.send([id, Buffer.from(encodeReply(record.correlation, record.payload))]);
      }
    }
  }

  async close(): Promise<void> {
    if (!this.router.closed) this.router.close();
    await this.loop;
  }
}

/**
 * A raw ROUTER standing in for a RouteMesh peer: it connects to a real MeshNode under its NodeRid,
 * completes the handshake with `state`, then sends whatever the fuzz gives it. `mandatory`, as above.
 */
export class FakePeerSocket {
  private readonly router: zmq.Router;
  private loop: Promise<void> | undefined;
  private static readonly NODE = 'node';
  received = 0;

  constructor(private readonly state: MeshNodeState) {
    this.router = new zmq.Router({ routingId: state.rid, linger: 0, mandatory: true });
  }

  /** Connects and says hello until the connection is up (a mandatory ROUTER refuses an unknown pipe). */
  async connect(endpoint: string, timeoutMs = 5000): Promise<this> {
    // Named before this socket's first endpoint, so zeromq.js has no option-after-bind warning to give.
    this.router.connect(endpoint, { routingId: FakePeerSocket.NODE });
    this.loop = drain(this.router, () => this.received++);
    const hello = Buffer.from(encodeMeshState(RecordKind.MeshHello, this.state));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await this.send([hello]);
        return this;
      } catch (error) {
        if ((error as { code?: string }).code !== 'EHOSTUNREACH' || Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  }

  send(frames: Buffer[]): Promise<void> {
    return this.router.send([FakePeerSocket.NODE, ...frames]);
  }

  async close(): Promise<void> {
    if (!this.router.closed) this.router.close();
    await this.loop;
  }
}

export interface FeedReport {
  readonly inputs: number;
  readonly frames: number;
  readonly bytes: number;
  /** Events the target had to count at least, and how many it counted. */
  readonly expected: number;
  readonly counted: number;
  /** Inputs the target may take without an event (see generator.ts). */
  readonly tolerated: number;
  readonly labels: Readonly<Record<string, number>>;
  readonly ms: number;
}

export interface FeedOptions {
  /** How far the expected count may run ahead of the counted one before sending pauses. */
  readonly window?: number;
  /** Fail when the counted events do not move for this long while some are still due. */
  readonly stallMs?: number;
  /** Wait for each input's events before the next (ZLINK_FUZZ_STRICT=1): names the first input that went uncounted. */
  readonly strict?: boolean;
}

/**
 * Sends every input, pausing while the target is more than `window` events behind, then waits until
 * it has counted at least every expected event. Throws, naming the shortfall, when the count stalls.
 */
export async function feed(
  source: Iterable<FuzzInput>,
  send: (frames: Buffer[]) => Promise<void>,
  counted: () => number,
  options: FeedOptions = {},
): Promise<FeedReport> {
  const window = options.window ?? 2048;
  const stallMs = options.stallMs ?? 15000;
  const started = Date.now();
  const labels: Record<string, number> = {};
  let inputs = 0;
  let frames = 0;
  let bytes = 0;
  let expected = 0;
  let tolerated = 0;

  const catchUp = async (ahead: number, what: () => string): Promise<void> => {
    let last = counted();
    let lastMoved = Date.now();
    while (expected - counted() > ahead) {
      await new Promise((r) => setTimeout(r, 1));
      const now = counted();
      if (now !== last) {
        last = now;
        lastMoved = Date.now();
      } else if (Date.now() - lastMoved > stallMs) {
        throw new Error(
          `fuzz: ${what()}: counted ${now} of ${expected} expected events, no progress for ${stallMs} ms`,
        );
      }
    }
  };

  for (const input of source) {
    await send(input.frames);
    inputs++;
    frames += input.frames.length;
    for (const f of input.frames) bytes += f.length;
    expected += input.expect;
    if (input.expect === 0) tolerated++;
    labels[input.label] = (labels[input.label] ?? 0) + 1;
    if (options.strict) {
      await catchUp(
        0,
        () =>
          `input ${inputs} (${input.label}: ${input.frames.map((f) => f.subarray(0, 64).toString('hex')).join(' | ')})`,
      );
    } else if (expected - counted() > window) {
      await catchUp(window / 2, () => `after ${inputs} inputs`);
    }
  }
  await catchUp(0, () => `at the end (${inputs} inputs)`);
  return { inputs, frames, bytes, expected, counted: counted(), tolerated, labels, ms: Date.now() - started };
}
