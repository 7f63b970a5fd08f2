import { RecordKind } from '../../core/wire/index.js';
import { timerDelay } from '../../core/calls/index.js';
import type { MeshLink } from '../../core/ports/index.js';
import { encodeTopicBarrier } from '../wire/index.js';

interface Round {
  readonly waiting: Set<string>;
  readonly done: () => void;
}

/**
 * Barrier rounds with every peer that has an object layer (a node without one never publishes, and
 * drops the record): `round` sends each a TopicBarrier and resolves once each answered, went, or the
 * time is up. What an answer proves is in topic-barrier-wire.ts. Several rounds may run at once.
 */
export class TopicBarriers {
  private next = 1;
  private readonly rounds = new Map<number, Round>();

  constructor(private readonly link: MeshLink) {}

  /** One round; never rejects. A peer that does not answer within `timeoutMs` is no longer waited for. */
  round(timeoutMs: number): Promise<void> {
    const id = this.next++;
    const waiting = new Set<string>();
    const record = encodeTopicBarrier(RecordKind.TopicBarrier, id);
    for (const peer of this.link.peers())
      if (peer.objectRole !== 'none' && this.link.answer(peer.rid, record)) waiting.add(peer.rid);
    if (waiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), timerDelay(timeoutMs));
      const done = (): void => {
        clearTimeout(timer);
        this.rounds.delete(id);
        resolve();
      };
      this.rounds.set(id, { waiting, done });
    });
  }

  /** A peer's barrier: answered at once, behind everything this node sent it before. */
  asked(rid: string, barrierId: number): void {
    this.link.answer(rid, encodeTopicBarrier(RecordKind.TopicBarrierAck, barrierId));
  }

  /** Peer `rid` answered round `barrierId`. */
  answered(rid: string, barrierId: number): void {
    const round = this.rounds.get(barrierId);
    if (round?.waiting.delete(rid) === true && round.waiting.size === 0) round.done();
  }

  /** Peer `rid` went: no round waits for it any more. */
  gone(rid: string): void {
    for (const round of [...this.rounds.values()])
      if (round.waiting.delete(rid) && round.waiting.size === 0) round.done();
  }

  /** Ends every round (the node is closing). */
  close(): void {
    for (const round of [...this.rounds.values()]) round.done();
  }
}
