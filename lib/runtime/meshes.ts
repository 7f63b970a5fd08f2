import process from 'node:process';
import { hostname } from 'node:os';
import { ZLinkError } from '../core/errors.js';
import type { MeshSnapshot, ZLinkEvents } from '../core/observe/index.js';
import type {
  ChannelHandlerRegistry,
  JobQueue,
  NodeHandlerRegistry,
  PendingRequests,
} from '../core/calls/index.js';
import type { LocationDescriptor, MeshNodeDescriptor } from '../core/ports/index.js';
import type { NormalizedOptions } from '../core/options/index.js';
import { MeshNode, type Submission } from '../transport/index.js';
import { bindListener } from './bind.js';
import type { RuntimeLocation } from './location.js';
import type { BindContext, Topology } from './topology.js';

export interface MeshesConfig {
  readonly options: NormalizedOptions;
  readonly generation: string;
  /** Distinguishes default NodeRids of this process. */
  readonly processTag: string;
  readonly channelHandlers: ChannelHandlerRegistry;
  readonly nodeHandlers: NodeHandlerRegistry;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
  readonly pending: PendingRequests;
  /** The object types a mesh's node advertises (`undefined`: none), read when the node is built. */
  readonly objectTypes: (mesh: string) => readonly string[] | undefined;
}

/** The runtime's MeshNodes: one per MeshName, and which node each mesh ChannelName belongs to. */
export class RuntimeMeshes implements Topology {
  readonly nodes = new Map<string, MeshNode>();
  private readonly byChannel = new Map<string, MeshNode>();

  constructor(private readonly config: MeshesConfig) {}

  /** The role a ChannelName has on this process's meshes, from the options (known before start). */
  channelRole(channel: string): 'server' | 'client' | undefined {
    for (const m of this.config.options.meshes.values()) {
      const c = m.channels.get(channel);
      if (c) return c.role;
    }
    return undefined;
  }

  /**
   * Binds every MeshNode's ROUTER; a bind failure is `Configuration` naming the listen option. With
   * a Location Store, each node's descriptor follows its state and its admission follows the lease.
   */
  async bind({ stillStarting, location, tracing }: BindContext): Promise<void> {
    const { options, generation, processTag, events, jobs, pending, channelHandlers, nodeHandlers } =
      this.config;
    const store = options.locationStore;
    for (const [mesh, m] of options.meshes) {
      const node: MeshNode = new MeshNode({
        mesh: m,
        rid: m.rid ?? `${hostname()}-${process.pid}-${processTag}-${mesh}`,
        generation,
        channelHandlers,
        nodeHandlers,
        jobs,
        events,
        pending,
        sendQueueLimit: options.sendQueueLimit,
        discovery: store && {
          vanishGraceMs: store.lease.ttlMs,
          connectAnywayAfterMs: store.fullReadIntervalMs,
        },
        onStateChange: location && (() => location.update(this.descriptorOf(node))),
        objectTypes: this.config.objectTypes(mesh),
        tracing,
        curve: options.security.curve,
        // A key or NodeRid met before the store was read again: read it now rather than at the interval.
        unlisted: location && (() => location.hint('mesh-node', mesh)),
      });
      location?.onFence((fenced) => node.setFenced(fenced));
      this.nodes.set(mesh, node);
      for (const channel of m.channels.keys()) this.byChannel.set(channel, node);
      await bindListener(() => node.bind(), `meshes.${mesh}.listen`, stillStarting);
    }
  }

  /** Starts the outbound peer links to the manual peers, once every node is bound. */
  connect(): void {
    for (const node of this.nodes.values()) node.connectPeers();
  }

  private descriptorOf(node: MeshNode): MeshNodeDescriptor {
    return meshNodeDescriptor(node, this.config.options.security.curve?.publicKey);
  }

  /** What this process's MeshNodes publish in the Location Store. */
  descriptors(): LocationDescriptor[] {
    return [...this.nodes.values()].map((node) => this.descriptorOf(node));
  }

  /** Starts automatic discovery for every mesh that asks for it; resolves after each first read. */
  discover(location: RuntimeLocation): Promise<unknown>[] {
    const reads: Promise<unknown>[] = [];
    for (const [mesh, m] of this.config.options.meshes) {
      const node = this.nodes.get(mesh);
      if (m.discovery !== 'auto' || !node) continue;
      reads.push(
        location.discover('mesh-node', mesh, (list) => node.setDiscovered(list as MeshNodeDescriptor[])),
      );
    }
    return reads;
  }

  snapshot(): MeshSnapshot[] {
    return [...this.nodes.values()].map((node) => node.snapshot());
  }

  /** The MeshNode a ChannelName is registered on, if it is a RouteMesh channel. */
  forChannel(channel: string): MeshNode | undefined {
    return this.byChannel.get(channel);
  }

  /**
   * A Node direct call to NodeRid `rid` of MeshName `mesh`; `NotFound` when this process has no such mesh.
   */
  submitToNode(kind: 'send' | 'request', mesh: string, rid: string, call: Submission): Promise<unknown> {
    const node = this.nodes.get(mesh);
    if (!node) throw new ZLinkError('NotFound', `MeshName '${mesh}' is not registered in this process`);
    if (kind === 'send') return node.calls.sendToNode(rid, call);
    return node.calls.requestToNode(rid, call, `request to node ${mesh}/${rid}/${call.packet}`);
  }

  async drain(deadlineMs: number): Promise<void> {
    await Promise.all([...this.nodes.values()].map((n) => n.drain(deadlineMs)));
  }

  async close(): Promise<void> {
    await Promise.all([...this.nodes.values()].map((n) => n.close()));
  }

  /**
   * Resolves once `count` peers of `mesh` are ready; `Timeout` past `timeoutMs`. For tests and operations.
   */
  async waitForPeers(mesh: string, count: number, timeoutMs: number): Promise<void> {
    const node = this.nodes.get(mesh);
    if (!node) throw new ZLinkError('NotFound', `MeshName '${mesh}' is not registered in this process`);
    await node.waitFor({ peers: count }, timeoutMs);
  }

  /** Resolves once the mesh ChannelName has `count` selectable candidates. */
  async waitForCandidates(channel: string, count: number, timeoutMs: number): Promise<void> {
    const node = this.byChannel.get(channel) as MeshNode;
    await node.waitFor({ channel, candidates: count }, timeoutMs);
  }
}

/** What a MeshNode publishes in the Location Store (docs/protocol.md#location-store). */
function meshNodeDescriptor(node: MeshNode, publicKey: string | undefined): MeshNodeDescriptor {
  const s = node.state;
  return {
    kind: 'mesh-node',
    mesh: s.mesh,
    rid: s.rid,
    generation: s.generation,
    endpoint: node.endpoint,
    objectRole: s.objectRole,
    memberships: s.memberships,
    revision: s.revision,
    // With CURVE, the key others connect to and know its NodeRid by.
    ...(publicKey !== undefined && { publicKey }),
  };
}
