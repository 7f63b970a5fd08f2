import { RecordKind } from '../../core/wire/index.js';
import { timerDelay } from '../../core/calls/index.js';
import type { MeshLink, NodeRun } from '../../core/ports/index.js';
import { encodeOwnerLeave } from '../wire/index.js';

/**
 * A draining object server's last step before it closes (docs/decisions.md "Leaving a mesh without
 * losing a call"): it tells every peer with an object layer that it is leaving (record 71) and waits
 * for each one's answer (72), or for that peer to go. A peer answers once it has dropped every cached
 * route to this node, and its answer travels behind everything it sent here before: once all answers
 * are in, no call on an old route is still on its way (a call already here was relayed), and the
 * peers' next calls read the objects' new owners. Without this a peer that had not called an object
 * since it moved would send its next call here after the node closed, and a send would be lost.
 */
export class LeaveBarrier {
  private waiting: Set<string> | undefined;
  private done: (() => void) | undefined;

  constructor(
    private readonly link: MeshLink,
    private readonly self: NodeRun,
  ) {}

  /** Tells the peers and resolves once each answered or went, `timeoutMs` at most. Never rejects. */
  leave(timeoutMs: number): Promise<void> {
    const waiting = new Set<string>();
    const record = encodeOwnerLeave(RecordKind.OwnerLeaving, this.self.nodeGeneration);
    // A peer with no object layer would never answer (it drops the record): it holds no routes either.
    for (const peer of this.link.peers())
      if (peer.objectRole !== 'none' && this.link.answer(peer.rid, record)) waiting.add(peer.rid);
    if (waiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(), timerDelay(timeoutMs));
      const finish = (): void => {
        clearTimeout(timer);
        this.waiting = undefined;
        this.done = undefined;
        resolve();
      };
      this.waiting = waiting;
      this.done = finish;
    });
  }

  /** Peer `rid` answered for this run, or went: it is no longer waited for. */
  answered(rid: string, nodeGeneration: string = this.self.nodeGeneration): void {
    if (nodeGeneration !== this.self.nodeGeneration || this.waiting?.delete(rid) !== true) return;
    if (this.waiting.size === 0) this.done?.();
  }
}
