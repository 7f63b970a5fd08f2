import { type Server, type Socket, createServer, connect } from 'node:net';

/** One connection carried: the client's side, the target's, and whether each way still carries. */
interface Carried {
  readonly client: Socket;
  readonly upstream: Socket;
  /** `up`: client to target; `down`: target to client. A stalled way drops what it is given. */
  readonly stalled: { up: boolean; down: boolean };
}

/**
 * A TCP proxy on 127.0.0.1 that records every byte it carries, both ways: what an eavesdropper on the
 * wire between two processes would see. Its target is set once the peer behind it has bound (until
 * then a connection is closed at once, and zeromq connects again; setting it back to `undefined`
 * refuses new connections the same way). With `replyDelayMs` it holds back what the target sends for
 * that long (in order): a process behind it learns every answer late, while the target has long
 * acted on the request. `stall` and `cut` make a network fail under the connections it carries, and
 * `discardFromClient` loses what the clients send while it is set.
 */
export class RecordingProxy {
  target: number | undefined;
  discardFromClient = false;
  /** Connections closed at once for want of a target. */
  refused = 0;
  private readonly chunks: Buffer[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly carried = new Set<Carried>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly replyDelayMs: number,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(options: { target?: number; replyDelayMs?: number } = {}): Promise<RecordingProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const proxy = new RecordingProxy(server, address.port, options.replyDelayMs ?? 0);
    proxy.target = options.target;
    return proxy;
  }

  get endpoint(): string {
    return `tcp://127.0.0.1:${this.port}`;
  }

  /** Every byte carried so far, both ways, in arrival order. */
  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  /** Whether `marker` (UTF-8) crossed the proxy in clear, either way. */
  saw(marker: string): boolean {
    return this.bytes.includes(Buffer.from(marker, 'utf8'));
  }

  private accept(client: Socket): void {
    if (this.target === undefined) {
      this.refused++;
      return void client.destroy();
    }
    const upstream = connect(this.target, '127.0.0.1');
    const one: Carried = { client, upstream, stalled: { up: false, down: false } };
    this.carried.add(one);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    const carry = (from: Socket, to: Socket, way: 'up' | 'down', delayMs: number) =>
      from.on('data', (chunk: Buffer) => {
        if (one.stalled[way]) return;
        this.chunks.push(Buffer.from(chunk));
        if (from === client && this.discardFromClient) return;
        // Timers of one delay fire in the order they were set: the stream keeps its order.
        if (delayMs === 0) to.write(chunk);
        else setTimeout(() => to.destroyed || to.write(chunk), delayMs);
      });
    carry(client, upstream, 'up', 0);
    carry(upstream, client, 'down', this.replyDelayMs);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => {
      client.destroy();
      this.carried.delete(one);
    });
  }

  /**
   * From now on the connections carried now lose what goes one way (`up`: to the target; `down`: to
   * the client), as a network that stopped delivering does; connections made later carry both ways.
   */
  stall(way: 'up' | 'down'): void {
    for (const one of this.carried) one.stalled[way] = true;
  }

  /** Destroys every connection carried now, both sides at once (a network that failed under them). */
  cut(): void {
    for (const one of this.carried) {
      one.client.destroy();
      one.upstream.destroy();
    }
    this.carried.clear();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
