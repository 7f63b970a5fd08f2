import { REMOTE_CODES } from '../../core/errors.js';
import {
  type MeshRequestRecord,
  type MeshSendRecord,
  type TracePropagation,
  RecordKind,
} from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type {
  ChannelHandlerRegistry,
  JobQueue,
  NodeHandlerRegistry,
  ZLinkMessageContext,
  ZLinkNodeMessageContext,
} from '../../core/calls/index.js';
import { InboundGate, type InboundScope, channelScope, failInbound, nodeScope } from '../inbound/index.js';

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

/**
 * The receiving half of a MeshNode: finds the handler scope of a business record — the Node direct
 * namespace of the mesh (no ChannelName) or one of the node's Server memberships — and hands it to
 * the inbound gate, which runs it under a job permit, refuses every record while the owner lease is
 * fenced, and refuses channel records while the node drains (Node direct goes on: the caller named
 * this node, docs/protocol.md#node-direct).
 */
export class MeshInbound {
  private readonly channelScopes = new Map<string, InboundScope<ZLinkMessageContext>>();
  private readonly nodeScope: InboundScope<ZLinkNodeMessageContext>;
  private readonly gate: InboundGate;

  constructor(private readonly config: MeshInboundConfig) {
    const { mesh, events, nodeHandlers, channelHandlers, reply, tracing } = config;
    for (const channel of config.serverChannels) {
      this.channelScopes.set(channel, {
        ...channelScope('route-mesh', events, channel, mesh, channelHandlers, reply),
        tracing,
      });
    }
    this.nodeScope = { ...nodeScope(events, mesh, nodeHandlers, config.sourceRid, reply), tracing };
    this.gate = new InboundGate({
      jobs: config.jobs,
      refusals: { who: `node '${config.rid}'`, drainNamesChannel: true, precedence: 'fenced' },
      backlog: MAX_WAITING_JOBS,
      // A record that waited for its permit runs even if the node began draining meanwhile.
      recheck: false,
    });
  }

  /**
   * The owner lease is fenced (docs/protocol.md#owner-lease-and-fencing): every new business record is
   * refused until it is held.
   */
  get fenced(): boolean {
    return this.gate.fenced;
  }

  set fenced(fenced: boolean) {
    this.gate.fenced = fenced;
  }

  get activeHandlers(): number {
    return this.gate.inFlight;
  }

  /**
   * Runs one business record from a ready peer. Returns a promise only when the receive loop has to
   * wait for a job permit before reading on (the waiting list is full).
   */
  deliver(id: Buffer, record: MeshSendRecord | MeshRequestRecord): Promise<void> | undefined {
    const correlation = record.kind === RecordKind.MeshRequest ? record.correlation : undefined;
    const { channel } = record;
    const scope = channel === undefined ? this.nodeScope : this.channelScopes.get(channel);
    if (!scope) {
      // A fenced node refuses even a record for a channel it has no membership for.
      if (this.gate.fenced) this.gate.refuse(this.nodeScope, id, correlation, record, 'fenced');
      else {
        failInbound(this.nodeScope, id, correlation, record, 'no_handler', {
          code: REMOTE_CODES.noHandler,
          message: `node '${this.config.rid}' has no Server membership for '${String(channel)}'`,
        });
      }
      return undefined;
    }
    this.gate.deliver(scope as InboundScope<unknown>, id, correlation, record, channel !== undefined);
    return this.gate.behind ? this.gate.caughtUp() : undefined;
  }

  /** An undecodable request with a legible correlation gets its error reply. */
  decodeError(id: Buffer, correlation: number, reason: string): void {
    failInbound(this.nodeScope, id, correlation, { packet: '' }, 'decode_error', {
      code: REMOTE_CODES.decodeError,
      message: reason,
    });
  }

  /** Stops admitting channel records and resolves when accepted work is done (or at the deadline). */
  drain(deadlineMs: number, closed: () => boolean): Promise<'completed' | 'deadline'> {
    return this.gate.drain(deadlineMs, closed);
  }
}
