import { type PendingRequests, ZLinkError, encodeMeshRequest, encodeMeshSend } from '../../core/index.js';
import { type Submission, admitThen } from '../admission.js';
import { WakeList } from '../wake-list.js';
import type { MeshNode } from './mesh-node.js';
import type { Peer } from './peer-table.js';

/**
 * The calls of one MeshNode: Node direct (the caller names the NodeRid; the framework never picks
 * another, 02 §2) and ChannelName select-one over the peers' Server memberships (02 §3). Selection
 * and submit are one step; a submitted call is never resent (02 §5).
 */
export class MeshCalls {
  /** Node direct calls waiting for a known peer to become ready. */
  private readonly waiters = new WakeList();

  constructor(
    private readonly node: MeshNode,
    private readonly pending: PendingRequests,
  ) {}

  sendToChannel(channel: string, call: Submission): Promise<void> {
    const peer = this.select(channel);
    if (this.node.pump.hasSpace && !call.signal?.aborted && !this.node.isClosed) {
      this.node.pump.offer(
        encodeMeshSend(channel, call.packet, call.metadata, call.payload),
        peer.route.pipe,
      );
      return Promise.resolve();
    }
    return this.sendSlow(peer, channel, call, `send ${channel}/${call.packet}`);
  }

  requestToChannel(channel: string, call: Submission, describe: string): Promise<unknown> {
    const peer = this.select(channel);
    if (this.node.pump.hasSpace && !this.node.isClosed)
      return this.submitRequest(peer, channel, call, describe, call.timeoutMs);
    return this.requestSlow(peer, channel, call, describe);
  }

  async sendToNode(rid: string, call: Submission): Promise<void> {
    const describe = `send to node ${rid}/${call.packet}`;
    const deadline = Date.now() + call.timeoutMs;
    const peer = this.target(rid) ?? (await this.waitForPeer(rid, call, deadline, describe));
    return this.sendSlow(peer, undefined, call, describe, deadline);
  }

  async requestToNode(rid: string, call: Submission, describe: string): Promise<unknown> {
    const deadline = Date.now() + call.timeoutMs;
    const peer = this.target(rid) ?? (await this.waitForPeer(rid, call, deadline, describe));
    return this.requestSlow(peer, undefined, call, describe, deadline);
  }

  /** Peer state changed: Node direct calls waiting for a known peer look again. */
  wake(): void {
    this.waiters.wakeAll();
  }

  close(): void {
    this.wake();
  }

  /** Throws `NotFound` (no member) or `Unavailable` (members, none selectable) at once: no waiting (02 §3). */
  private select(channel: string): Peer {
    const candidates = this.node.candidates.get(channel);
    const peer = candidates?.selector.pick();
    if (peer) return peer;
    const mesh = this.node.mesh;
    if (candidates && candidates.members > 0) {
      throw new ZLinkError(
        'Unavailable',
        `every Server of '${channel}' on mesh '${mesh}' has weight 0 or is draining`,
      );
    }
    throw new ZLinkError(
      'NotFound',
      `no peer of mesh '${mesh}' serves '${channel}' (this node is never its own candidate)`,
    );
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
    const peer = this.node.table.peers.get(rid);
    if (peer) {
      if (peer.state.objectRole === 'client') {
        throw new ZLinkError(
          'NotFound',
          `node '${rid}' on '${mesh}' is an Object Client, not a Node direct target`,
        );
      }
      return peer;
    }
    if (!this.isKnown(rid))
      throw new ZLinkError('NotFound', `node '${rid}' is not a member of mesh '${mesh}'`);
    return undefined;
  }

  /** Configured with that NodeRid, or seen on one of our links: it may become ready. */
  private isKnown(rid: string): boolean {
    for (const link of this.node.table.links.values()) {
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
      if (this.node.isClosed) throw new ZLinkError('Shutdown', `${describe}: the node is closing`);
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
  changed(ms: number, signal?: AbortSignal, describe = 'wait for a peer change'): Promise<void> {
    return this.waiters.wait(ms, signal, describe);
  }

  private async sendSlow(
    peer: Peer,
    channel: string | undefined,
    call: Submission,
    describe: string,
    deadline = Date.now() + call.timeoutMs,
  ): Promise<void> {
    const record = encodeMeshSend(channel, call.packet, call.metadata, call.payload);
    await admitThen(
      this.node.pump,
      call,
      deadline,
      describe,
      () => this.blocked(peer, describe),
      // The route read in the turn that queues: the peer's current link.
      () => this.node.pump.offer(record, peer.route.pipe),
    );
  }

  private async requestSlow(
    peer: Peer,
    channel: string | undefined,
    call: Submission,
    describe: string,
    deadline = Date.now() + call.timeoutMs,
  ): Promise<unknown> {
    return admitThen(
      this.node.pump,
      call,
      deadline,
      describe,
      () => this.blocked(peer, describe),
      () => this.submitRequest(peer, channel, call, describe, Math.max(1, deadline - Date.now())),
    );
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
    const { correlation, result } = this.pending.open({ timeoutMs, signal: call.signal, route, describe });
    this.node.pump.offer(
      encodeMeshRequest(correlation, channel, call.packet, call.metadata, call.payload),
      route.pipe,
    );
    return result;
  }

  private blocked(peer: Peer, describe: string): ZLinkError | undefined {
    if (this.node.isClosed) return new ZLinkError('Shutdown', `${describe}: the node is closing`);
    if (this.node.table.peers.get(peer.rid) !== peer) {
      return new ZLinkError('RouteError', `${describe}: peer '${peer.rid}' was lost before submit`);
    }
    return undefined;
  }
}
