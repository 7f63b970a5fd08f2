/** Building blocks shared by the ClientServer integration suites (real zeromq on 127.0.0.1, port 0). */
import * as zmq from 'zeromq';
import {
  type ChannelHandlerFn,
  type MessageKind,
  type ServerState,
  type ZLinkOptions,
  type WireRecord,
  RecordKind,
  decodeFrame,
  encodeServerState,
} from '../../../lib/core/index.js';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { type Cleanup, waitFor } from '../../helpers/index.js';

export const LOCAL = '127.0.0.1';
export const listen = { port: 0, bindHost: LOCAL } as const;

export type HandlerSpec = readonly [kind: MessageKind, packet: string, handler: ChannelHandlerFn];

/** Creates, registers handlers on, starts and tracks a runtime. */
export async function startRuntime(
  cleanup: Cleanup,
  options: ZLinkOptions,
  handlers: readonly HandlerSpec[] = [],
): Promise<ZLinkRuntime> {
  const runtime = cleanup.add(new ZLinkRuntime(options));
  for (const [kind, packet, handler] of handlers) {
    for (const channel of channelsWithServer(options)) {
      runtime.registerChannelHandler({ channel, kind, packet, handler, source: `test.${packet}` });
    }
  }
  await runtime.start();
  return runtime;
}

function channelsWithServer(options: ZLinkOptions): string[] {
  const cs = options.clientServer;
  if (!cs || Array.isArray(cs)) return [];
  return Object.entries(cs)
    .filter(([, c]) => c.server !== undefined)
    .map(([name]) => name);
}

/** Ready connections (handshake confirmed) the Client of `channel` holds. */
export function readyConnections(runtime: ZLinkRuntime, channel: string): number {
  const ch = runtime.snapshot().channels.find((c) => c.channel === channel);
  return ch?.client?.connections.filter((c) => c.ready).length ?? 0;
}

export function candidates(runtime: ZLinkRuntime, channel: string): number {
  return runtime.snapshot().channels.find((c) => c.channel === channel)?.client?.candidates ?? 0;
}

export function waitForCandidates(
  runtime: ZLinkRuntime,
  channel: string,
  count: number,
  timeoutMs = 5000,
): Promise<void> {
  return waitFor(
    () => candidates(runtime, channel) >= count,
    timeoutMs,
    `${count} candidate(s) on '${channel}'`,
  );
}

/**
 * A raw zeromq ROUTER standing in for a server: records what clients send, and answers hello only
 * when told to (`welcome`). Lets a test put arbitrary records on the wire toward a real client.
 */
export class FakeServer {
  readonly router = new zmq.Router();
  readonly received: { id: Buffer; record: WireRecord }[] = [];
  endpoint = '';
  private loop: Promise<void> | undefined;

  constructor(private readonly answer: ServerState | undefined) {
    this.router.linger = 0;
  }

  async bind(): Promise<this> {
    await this.router.bind(`tcp://${LOCAL}:*`);
    this.endpoint = this.router.lastEndpoint as string;
    this.loop = this.run();
    return this;
  }

  /** Every client id that said hello. */
  get clients(): Buffer[] {
    const seen = new Map<string, Buffer>();
    for (const { id, record } of this.received)
      if (record.kind === RecordKind.Hello) seen.set(id.toString('hex'), id);
    return [...seen.values()];
  }

  async send(id: Buffer, record: Uint8Array): Promise<void> {
    await this.router.send([id, record]);
  }

  async state(id: Buffer, state: ServerState): Promise<void> {
    await this.send(id, encodeServerState(RecordKind.State, state));
  }

  close(): Promise<void> | undefined {
    if (!this.router.closed) this.router.close();
    return this.loop;
  }

  private async run(): Promise<void> {
    for (;;) {
      let message: Buffer[];
      try {
        message = await this.router.receive();
      } catch {
        return;
      }
      const id = message[0] as Buffer;
      for (const record of decodeFrame(message[1] as Buffer).records) {
        this.received.push({ id, record });
        if (record.kind === RecordKind.Hello && this.answer) {
          await this.send(id, encodeServerState(RecordKind.Welcome, this.answer));
        }
      }
    }
  }
}

export function fakeState(channel: string, overrides: Partial<ServerState> = {}): ServerState {
  return {
    channel,
    serverRid: 'fake-server',
    generation: 'fake-generation',
    weight: 100,
    draining: false,
    revision: 1,
    ...overrides,
  };
}
