import {
  type ChannelHandlerRegistry,
  type JobQueue,
  type MeshRequestRecord,
  type MeshSendRecord,
  type NodeHandlerRegistry,
  type TracePropagation,
  type ZLinkEvents,
  type ZLinkMessageContext,
  type ZLinkNodeMessageContext,
  DRAINING_CODE,
  FENCED_CODE,
  REMOTE_CODES,
  RecordKind,
} from '../../core/index.js';
import { type InboundScope, channelScope, failInbound, runInbound } from '../inbound.js';

/** See `ServerListener`: a draining node answers `Rejected` until this long without channel traffic. */
const DRAIN_QUIET_MS = 200;
/**
 * Received business records waiting for a job permit before the receive loop stops reading. The
 * loop must keep reading as long as it can: replies to this node's own requests arrive on the same
 * socket, and a handler waiting for one holds a permit.
 */
const MAX_WAITING_JOBS = 10000;

export interface MeshInboundConfig {
  readonly mesh: string;
  readonly rid: string;
  /** ChannelNames this node holds a Server membership for. */
  readonly serverChannels: Iterable<string>;
  readonly channelHandlers: ChannelHandlerRegistry;
  readonly nodeHandlers: NodeHandlerRegistry;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
  /** The NodeRid behind a pipe, for a Node direct handler's `sourceRid`. */
  readonly sourceRid: (pipe: Buffer) => string;
  readonly reply: (pipe: Buffer, record: Uint8Array) => void;
  /** Trace propagation (OpenTelemetry loaded by the runtime): traced handlers run in their context. */
  readonly tracing: TracePropagation | undefined;
}

type AnyScope = InboundScope<ZLinkMessageContext> | InboundScope<ZLinkNodeMessageContext>;

/**
 * The receiving half of a MeshNode: finds the handler scope of a business record — the Node direct
 * namespace of the mesh (no ChannelName) or one of the node's Server memberships — runs it under a
 * job permit, and refuses channel records while the node drains (Node direct goes on: the caller
 * named this node, 02 §8).
 */
export class MeshInbound {
  private readonly channelScopes = new Map<string, InboundScope<ZLinkMessageContext>>();
  private readonly nodeScope: InboundScope<ZLinkNodeMessageContext>;
  private admitting = true;
  /** The owner lease is fenced (guide §6.2): every new business record is refused until it is held. */
  fenced = false;
  private inFlight = 0;
  private waitingJobs = 0;
  private lastRefusedAt = 0;

  constructor(private readonly config: MeshInboundConfig) {
    const { mesh, events, nodeHandlers, channelHandlers, reply, tracing } = config;
    for (const channel of config.serverChannels) {
      this.channelScopes.set(channel, {
        ...channelScope('route-mesh', events, channel, mesh, channelHandlers, reply),
        tracing,
      });
    }
    this.nodeScope = {
      route: 'route-mesh',
      events,
      channel: undefined,
      mesh,
      metrics: events.metrics.scope('route-mesh', undefined, mesh).handlers,
      lookup: (kind, packet) => nodeHandlers.lookup(mesh, kind, packet),
      context: (kind, packet, metadata, correlation, source) => ({
        meshName: mesh,
        sourceRid: config.sourceRid(source),
        kind,
        packet,
        metadata,
        correlation,
      }),
      reply,
      tracing,
    };
  }

  get activeHandlers(): number {
    return this.inFlight;
  }

  /**
   * Runs one business record from a ready peer. Returns a promise only when the receive loop has to
   * wait for a job permit before reading on (the waiting list is full).
   */
  deliver(id: Buffer, record: MeshSendRecord | MeshRequestRecord): Promise<void> | undefined {
    const scope = this.scopeFor(id, record);
    if (!scope) return undefined;
    const { jobs } = this.config;
    if (jobs.tryAcquire()) {
      this.run(scope, id, record);
      return undefined;
    }
    if (this.waitingJobs >= MAX_WAITING_JOBS) return jobs.acquire().then(() => this.run(scope, id, record));
    this.waitingJobs++;
    void jobs.acquire().then(() => {
      this.waitingJobs--;
      this.run(scope, id, record);
    });
    return undefined;
  }

  /** An undecodable request with a legible correlation gets its error reply. */
  decodeError(id: Buffer, correlation: number, reason: string): void {
    failInbound(this.nodeScope, id, correlation, { packet: '' }, 'decode_error', {
      code: REMOTE_CODES.decodeError,
      message: reason,
    });
  }

  /** Stops admitting channel records and resolves when accepted work is done (or at the deadline). */
  async drain(deadlineMs: number, closed: () => boolean): Promise<'completed' | 'deadline'> {
    this.admitting = false;
    const started = Date.now();
    const deadline = started + deadlineMs;
    while (!closed() && Date.now() < deadline) {
      if (this.inFlight === 0 && Date.now() - Math.max(started, this.lastRefusedAt) >= DRAIN_QUIET_MS) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    return this.inFlight > 0 ? 'deadline' : 'completed';
  }

  private scopeFor(id: Buffer, record: MeshSendRecord | MeshRequestRecord): AnyScope | undefined {
    const correlation = record.kind === RecordKind.MeshRequest ? record.correlation : undefined;
    if (this.fenced) {
      const scope = record.channel === undefined ? undefined : this.channelScopes.get(record.channel);
      failInbound((scope ?? this.nodeScope) as InboundScope<unknown>, id, correlation, record, 'rejected', {
        code: FENCED_CODE,
        message: `node '${this.config.rid}' is fenced: its owner lease was not refreshed in time`,
      });
      return undefined;
    }
    if (record.channel === undefined) return this.nodeScope;
    const scope = this.channelScopes.get(record.channel);
    if (!scope) {
      failInbound(this.nodeScope, id, correlation, record, 'no_handler', {
        code: REMOTE_CODES.noHandler,
        message: `node '${this.config.rid}' has no Server membership for '${record.channel}'`,
      });
      return undefined;
    }
    if (!this.admitting) {
      this.lastRefusedAt = Date.now();
      failInbound(scope, id, correlation, record, 'rejected', {
        code: DRAINING_CODE,
        message: `node '${this.config.rid}' is draining '${record.channel}'`,
      });
      return undefined;
    }
    return scope;
  }

  private run(scope: AnyScope, id: Buffer, record: MeshSendRecord | MeshRequestRecord): void {
    this.inFlight++;
    const correlation = record.kind === RecordKind.MeshRequest ? record.correlation : undefined;
    void runInbound(scope as InboundScope<unknown>, id, correlation, record).finally(() => {
      this.inFlight--;
      this.config.jobs.release();
    });
  }
}
