import { ZLinkError } from '../../core/errors.js';
import { encodeMeshRequest, encodeMeshSend } from '../../core/wire/index.js';
import type { CallMetrics, ZLinkEvents } from '../../core/observe/index.js';
import { type PendingRequests, RESOLVED } from '../../core/calls/index.js';
import {
  type SelectionSource,
  type Submission,
  WakeList,
  admitThen,
  reportSelection,
} from '../outbound/index.js';
import type { SocketPump } from '../io/index.js';
import type { MeshChannelCandidates } from './mesh-candidates.js';
import type { OutboundLink, Peer } from './peer-table.js';

/** What the calls of a MeshNode need from it: its send queue, who can be reached, and whether it closed. */
export interface MeshCallHost {
  readonly mesh: string;
  readonly rid: string;
  /** The ROUTER's send queue: every call's record goes through it. */
  readonly pump: SocketPump;
  isClosed(): boolean;
  /** The ready peers, by NodeRid. */
  readonly peers: ReadonlyMap<string, Peer>;
  /** The outbound links, by endpoint (a Node direct target may be known only from one). */
  readonly links: ReadonlyMap<string, OutboundLink>;
  /** The select-one state of a ChannelName of this mesh. */
  candidates(channel: string): MeshChannelCandidates | undefined;
}

/** What `MeshNode.waitFor` can wait for: ready peers, or selectable candidates of one ChannelName. */
export type MeshWait = { readonly peers: number } | { readonly channel: string; readonly candidates: number };

/**
 * The calls of one MeshNode: Node direct (the caller names the NodeRid; the framework never picks another,
 * docs/protocol.md#node-direct) and ChannelName select-one over the peers' Server memberships
 * (docs/protocol.md#select-one). Selection and submit are one step; a submitted call is never resent
 * (docs/protocol.md#no-resend-after-selection).
 */
export class MeshCalls {
  /** Node direct calls waiting for a known peer to become ready. */
  private readonly waiters = new WakeList();

  /** Caller-side counters per ChannelName, and for Node direct; filled on a channel's first call. */
  private readonly channelMetrics = new Map<string, CallMetrics>();
  private readonly nodeMetrics: CallMetrics;
  private readonly selection: SelectionSource;

  constructor(
    private readonly node: MeshCallHost,
    private readonly pending: PendingRequests,
    events: ZLinkEvents,
  ) {
    this.nodeMetrics = events.metrics.scope('route-mesh', undefined, node.mesh).calls;
    this.selection = {
      events,
      route: 'route-mesh',
      channel: undefined,
      mesh: node.mesh,
      get sourceRid() {
        return node.rid;
      },
    };
  }

  sendToChannel(channel: string, call: Submission): Promise<void> {
    const peer = this.select(channel);
    if (this.canQueueNow(call)) {
      this.node.pump.offer(
        encodeMeshSend(channel, call.packet, call.metadata, call.payload, call.trace),
        peer.route.pipe,
      );
      this.metricsFor(channel).sends++;
      if (this.selection.events.perMessage) this.selected('send', channel, peer, 'immediate');
      return RESOLVED;
    }
    return this.sendSlow(peer, channel, call, `send ${channel}/${call.packet}`);
  }

  requestToChannel(channel: string, call: Submission, describe: string): Promise<unknown> {
    const peer = this.select(channel);
    if (this.canQueueNow(call)) {
      if (this.selection.events.perMessage) this.selected('request', channel, peer, 'immediate');
      return this.submitRequest(peer, channel, call, describe, call.timeoutMs);
    }
    return this.requestSlow(peer, channel, call, describe);
  }

  /**
   * Node direct send. In this turn when `rid`'s link is ready and the queue has space (no deadline,
   * no async frame); else waits for the peer and for space until the deadline (`sendSlow`).
   */
  sendToNode(rid: string, call: Submission): Promise<void> {
    let peer: Peer | undefined;
    try {
      peer = this.target(rid);
    } catch (error) {
      return Promise.reject(error);
    }
    if (peer !== undefined && this.canQueueNow(call)) {
      this.node.pump.offer(
        encodeMeshSend(undefined, call.packet, call.metadata, call.payload, call.trace),
        peer.route.pipe,
      );
      this.nodeMetrics.sends++;
      if (this.selection.events.perMessage) this.selected('send', undefined, peer, 'immediate');
      return RESOLVED;
    }
    return this.sendToNodeSlow(rid, call, peer);
  }

  private async sendToNodeSlow(rid: string, call: Submission, known: Peer | undefined): Promise<void> {
    const describe = `send to node ${rid}/${call.packet}`;
    const deadline = Date.now() + call.timeoutMs;
    const peer = known ?? (await this.waitForPeer(rid, call, deadline, describe));
    return this.sendSlow(peer, undefined, call, describe, deadline);
  }

  /** Node direct request: queued in this turn as `sendToNode` is, else after waiting; ends once. */
  requestToNode(rid: string, call: Submission, describe: string): Promise<unknown> {
    let peer: Peer | undefined;
    try {
      peer = this.target(rid);
    } catch (error) {
      return Promise.reject(error);
    }
    if (peer !== undefined && this.canQueueNow(call)) {
      if (this.selection.events.perMessage) this.selected('request', undefined, peer, 'immediate');
      return this.submitRequest(peer, undefined, call, describe, call.timeoutMs);
    }
    return this.requestToNodeSlow(rid, call, describe, peer);
  }

  private async requestToNodeSlow(
    rid: string,
    call: Submission,
    describe: string,
    known: Peer | undefined,
  ): Promise<unknown> {
    const deadline = Date.now() + call.timeoutMs;
    const peer = known ?? (await this.waitForPeer(rid, call, deadline, describe));
    return this.requestSlow(peer, undefined, call, describe, deadline);
  }

  /** Whether a call may be queued in this very turn: space, not aborted, the node open. */
  private canQueueNow(call: Submission): boolean {
    return this.node.pump.hasSpace && !call.signal?.aborted && !this.node.isClosed();
  }

  /** Peer state changed: Node direct calls waiting for a known peer look again. */
  wake(): void {
    this.waiters.wakeAll();
  }

  close(): void {
    this.wake();
  }

  /**
   * Throws `NotFound` (no member) or `Unavailable` (members, none selectable) at once: no waiting
   * (docs/protocol.md#when-there-is-no-candidate).
   */
  private select(channel: string): Peer {
    const candidates = this.node.candidates(channel);
    const peer = candidates?.selector.pick();
    if (peer) return peer;
    const mesh = this.node.mesh;
    const error =
      candidates && candidates.members > 0
        ? new ZLinkError(
            'Unavailable',
            `every Server of '${channel}' on mesh '${mesh}' has weight 0 or is draining`,
          )
        : new ZLinkError(
            'NotFound',
            `no peer of mesh '${mesh}' serves '${channel}' (this node is never its own candidate)`,
          );
    this.metricsFor(channel).refuse(error);
    throw error;
  }

  /**
   * The ready peer named `rid`, `undefined` when it is known but not ready (the call may wait for
   * it); throws `NotFound` for a node that is not a member, this node itself, or an Object Client.
   */
  private target(rid: string): Peer | undefined {
    const mesh = this.node.mesh;
    if (rid === this.node.rid) {
      throw new ZLinkError(
        'NotFound',
        `node '${rid}' is this node; a MeshNode is not its own peer on '${mesh}'`,
      );
    }
    const peer = this.node.peers.get(rid);
    if (peer) {
      if (peer.state.objectRole === 'client') {
        throw new ZLinkError(
          'NotFound',
          `node '${rid}' on '${mesh}' is an Object Client, not a Node direct target`,
        );
      }
      return peer;
    }
    if (!this.isKnown(rid)) {
      const refusal = this.refusalOf(rid);
      throw new ZLinkError(
        'NotFound',
        refusal === undefined
          ? `node '${rid}' is not a member of mesh '${mesh}'`
          : `node '${rid}' is no peer on mesh '${mesh}': its link was refused: ${refusal}`,
      );
    }
    return undefined;
  }

  /** Why a configured link to `rid` was refused for good, if one was. */
  private refusalOf(rid: string): string | undefined {
    for (const link of this.node.links.values()) {
      if (link.status === 'refused' && link.refusal?.rid === rid) return link.refusal.why;
    }
    return undefined;
  }

  /** Configured with that NodeRid, or seen on one of our links: it may become ready. */
  private isKnown(rid: string): boolean {
    for (const link of this.node.links.values()) {
      if ((link.expectedRid === rid || link.peerRid === rid) && link.status !== 'refused') return true;
    }
    return false;
  }

  private async waitForPeer(
    rid: string,
    call: Submission,
    deadline: number,
    describe: string,
  ): Promise<Peer> {
    for (;;) {
      if (this.node.isClosed()) throw new ZLinkError('Shutdown', `${describe}: the node is closing`);
      const peer = this.target(rid);
      if (peer) return peer;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new ZLinkError('Timeout', `${describe}: node '${rid}' is known but was not ready in time`);
      }
      await this.changed(left, call.signal, describe);
    }
  }

  /** Resolves at the next peer change, or after `ms`; `Cancelled` on abort. */
  private changed(ms: number, signal?: AbortSignal, describe = 'wait for a peer change'): Promise<void> {
    return this.waiters.wait(ms, signal, describe);
  }

  /** See `MeshNode.waitFor`. */
  async waitFor(what: MeshWait, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const done =
      'peers' in what
        ? () => this.node.peers.size >= what.peers
        : () => (this.node.candidates(what.channel)?.selector.size ?? 0) >= what.candidates;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0 || this.node.isClosed()) {
        const message =
          'peers' in what
            ? `mesh '${this.node.mesh}' did not reach ${what.peers} ready peer(s) in ${timeoutMs} ms`
            : `'${what.channel}' did not reach ${what.candidates} candidate(s) in ${timeoutMs} ms`;
        throw new ZLinkError('Timeout', message);
      }
      await this.changed(left);
    }
  }

  private async sendSlow(
    peer: Peer,
    channel: string | undefined,
    call: Submission,
    describe: string,
    deadline = Date.now() + call.timeoutMs,
  ): Promise<void> {
    const record = encodeMeshSend(channel, call.packet, call.metadata, call.payload, call.trace);
    const admission = this.node.pump.hasSpace ? 'immediate' : 'after_wait';
    try {
      await admitThen(
        this.node.pump,
        call,
        deadline,
        describe,
        () => this.blocked(peer, describe),
        // The route read in the turn that queues: the peer's current link.
        () => this.node.pump.offer(record, peer.route.pipe),
      );
    } catch (error) {
      this.metricsFor(channel).refuse(error);
      if (this.selection.events.perMessage) this.selected('send', channel, peer, 'refused', error);
      throw error;
    }
    this.metricsFor(channel).sends++;
    if (this.selection.events.perMessage) this.selected('send', channel, peer, admission);
  }

  private async requestSlow(
    peer: Peer,
    channel: string | undefined,
    call: Submission,
    describe: string,
    deadline = Date.now() + call.timeoutMs,
  ): Promise<unknown> {
    const admission = this.node.pump.hasSpace ? 'immediate' : 'after_wait';
    let queued: { reply: Promise<unknown> };
    try {
      // Wrapped so that admission resolves once the request is queued, not when its reply comes.
      queued = await admitThen(
        this.node.pump,
        call,
        deadline,
        describe,
        () => this.blocked(peer, describe),
        () => ({
          reply: this.submitRequest(peer, channel, call, describe, Math.max(1, deadline - Date.now())),
        }),
      );
    } catch (error) {
      this.metricsFor(channel).refuse(error);
      if (this.selection.events.perMessage) this.selected('request', channel, peer, 'refused', error);
      throw error;
    }
    if (this.selection.events.perMessage) this.selected('request', channel, peer, admission);
    return queued.reply;
  }

  private metricsFor(channel: string | undefined): CallMetrics {
    if (channel === undefined) return this.nodeMetrics;
    let metrics = this.channelMetrics.get(channel);
    if (!metrics) {
      metrics = this.selection.events.metrics.scope('route-mesh', channel, this.node.mesh).calls;
      this.channelMetrics.set(channel, metrics);
    }
    return metrics;
  }

  private selected(
    kind: 'send' | 'request',
    channel: string | undefined,
    peer: Peer,
    admission: 'immediate' | 'after_wait' | 'refused',
    error?: unknown,
  ): void {
    reportSelection(this.selection, kind, channel, peer.rid, admission, error);
  }

  /** Opens the pending entry and queues the record in one turn, tied to the route it leaves on. */
  private submitRequest(
    peer: Peer,
    channel: string | undefined,
    call: Submission,
    describe: string,
    timeoutMs: number,
  ): Promise<unknown> {
    const route = peer.route;
    const metrics = this.metricsFor(channel);
    const { correlation, result } = this.pending.open({
      timeoutMs,
      signal: call.signal,
      route,
      describe,
      metrics,
    });
    metrics.requests++;
    this.node.pump.offer(
      encodeMeshRequest(correlation, channel, call.packet, call.metadata, call.payload, call.trace),
      route.pipe,
    );
    return result;
  }

  private blocked(peer: Peer, describe: string): ZLinkError | undefined {
    if (this.node.isClosed()) return new ZLinkError('Shutdown', `${describe}: the node is closing`);
    if (this.node.peers.get(peer.rid) !== peer) {
      return new ZLinkError('RouteError', `${describe}: peer '${peer.rid}' was lost before submit`);
    }
    return undefined;
  }
}
