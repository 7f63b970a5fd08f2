/** Building blocks shared by the RouteMesh integration suites (real zeromq on 127.0.0.1, port 0). */
import * as zmq from 'zeromq';
import {
  type ChannelHandlerFn,
  type MeshNodeState,
  type MeshOptions,
  type MessageKind,
  type NodeHandlerFn,
  type WireRecord,
  type ZLinkOptions,
  RecordKind,
  decodeFrame,
  encodeMeshPing,
  encodeMeshState,
} from '../../../lib/core/index.js';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import type { Cleanup } from '../../helpers/index.js';

export const listen = { port: 0, bindHost: '127.0.0.1' } as const;

export interface MeshNodeSpec {
  readonly mesh?: string;
  readonly rid: string;
  /** A fixed port (from `freePort()`), for nodes that must know each other's endpoint up front. */
  readonly port?: number;
  readonly peers?: MeshOptions['peers'];
  readonly discovery?: MeshOptions['discovery'];
  readonly channels?: MeshOptions['channels'];
  /** Channel handlers: [channel, kind, packet, handler]. */
  readonly handlers?: readonly (readonly [string, MessageKind, string, ChannelHandlerFn])[];
  /** Node direct handlers: [kind, packet, handler]. */
  readonly nodeHandlers?: readonly (readonly [MessageKind, string, NodeHandlerFn])[];
  readonly extra?: Omit<ZLinkOptions, 'meshes'>;
}

/** Starts a runtime with one MeshNode (default mesh `game`) and tracks it for cleanup. */
export async function startNode(cleanup: Cleanup, spec: MeshNodeSpec): Promise<ZLinkRuntime> {
  const mesh = spec.mesh ?? 'game';
  const runtime = cleanup.add(
    new ZLinkRuntime({
      ...spec.extra,
      meshes: {
        [mesh]: {
          rid: spec.rid,
          listen: { ...listen, port: spec.port ?? 0 },
          peers: spec.peers ?? [],
          channels: spec.channels ?? {},
          discovery: spec.discovery,
        },
      },
    }),
  );
  for (const [channel, kind, packet, handler] of spec.handlers ?? []) {
    runtime.registerChannelHandler({ channel, kind, packet, handler, source: `${spec.rid}.${packet}` });
  }
  for (const [kind, packet, handler] of spec.nodeHandlers ?? []) {
    runtime.registerNodeHandler({ mesh, kind, packet, handler, source: `${spec.rid}.node.${packet}` });
  }
  await runtime.start();
  return runtime;
}

/** A `who` request handler that answers with the node's name. */
export function who(name: string): ChannelHandlerFn {
  return () => name;
}

export function endpointOf(runtime: ZLinkRuntime, mesh = 'game'): string {
  const endpoint = runtime.meshEndpoint(mesh);
  if (!endpoint) throw new Error(`no MeshNode on '${mesh}'`);
  return endpoint;
}

/** Counts per answer. */
export function tally(answers: readonly unknown[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) out[String(a)] = (out[String(a)] ?? 0) + 1;
  return out;
}

/**
 * A raw zeromq ROUTER standing in for a MeshNode: it connects to a real node, says hello with any
 * state it is given, records what it receives, and pings only when told to.
 */
export class FakePeer {
  readonly router: zmq.Router;
  readonly received: WireRecord[] = [];
  private loop: Promise<void> | undefined;
  private pinger: NodeJS.Timeout | undefined;
  private static readonly NODE = 'node';

  constructor(readonly state: MeshNodeState) {
    this.router = new zmq.Router({ routingId: state.rid, linger: 0 });
  }

  /** Connects to `endpoint` and says hello; the pipe toward the node is named `node`. */
  async connect(
    endpoint: string,
    hello: Uint8Array = encodeMeshState(RecordKind.MeshHello, this.state),
  ): Promise<this> {
    this.router.connect(endpoint, { routingId: FakePeer.NODE });
    this.loop = this.run();
    await this.send(hello);
    return this;
  }

  send(record: Uint8Array): Promise<void> {
    return this.router.send([FakePeer.NODE, record]);
  }

  sendRaw(frames: Uint8Array[]): Promise<void> {
    return this.router.send([FakePeer.NODE, ...frames]);
  }

  pingEvery(ms: number): void {
    this.pinger = setInterval(() => void this.send(encodeMeshPing()).catch(() => undefined), ms);
  }

  stopPinging(): void {
    if (this.pinger) clearInterval(this.pinger);
  }

  close(): Promise<void> | undefined {
    this.stopPinging();
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
      this.received.push(...decodeFrame(message[message.length - 1] as Buffer).records);
    }
  }
}

export function fakeState(rid: string, overrides: Partial<MeshNodeState> = {}): MeshNodeState {
  return {
    mesh: 'game',
    rid,
    generation: 'fake-gen',
    objectRole: 'none',
    memberships: [],
    revision: 1,
    ...overrides,
  };
}
