import { type Server, type Socket, createServer, connect } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 that records every byte it carries, both ways: what an eavesdropper on the
 * wire between two processes would see. Its target is set once the peer behind it has bound (until
 * then a connection is closed at once, and zeromq connects again). With `replyDelayMs` it holds back
 * what the target sends for that long (in order): a process behind it learns every answer late,
 * while the target has long acted on the request. A network that fails under a client: `cut()` drops
 * every connection it carries, `target = undefined` refuses new ones, and `discardFromClient` loses
 * what the clients send while it is set.
 */
export class RecordingProxy {
  target: number | undefined;
  discardFromClient = false;
  /** Connections closed at once for want of a target. */
  refused = 0;
  private readonly chunks: Buffer[] = [];
  private readonly sockets = new Set<Socket>();

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
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    const carry = (from: Socket, to: Socket, delayMs: number) =>
      from.on('data', (chunk: Buffer) => {
        this.chunks.push(Buffer.from(chunk));
        if (from === client && this.discardFromClient) return;
        // Timers of one delay fire in the order they were set: the stream keeps its order.
        if (delayMs === 0) to.write(chunk);
        else setTimeout(() => to.destroyed || to.write(chunk), delayMs);
      });
    carry(client, upstream, 0);
    carry(upstream, client, this.replyDelayMs);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  /** Drops every connection it carries, both sides at once, with no goodbye. */
  cut(): void {
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
