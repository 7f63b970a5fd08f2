import type { AuthorityStore, NodeRun } from '../../core/ports/index.js';
import type { DeactivationReason } from '../../core/objects/index.js';
import type { Activation } from './activation.js';
import type { ActivationTable } from './activation-table.js';
import { RECHECK_RETRY_MS } from '../timing/index.js';

export interface LeaseRecheckDeps {
  readonly store: AuthorityStore;
  readonly self: NodeRun;
  readonly table: ActivationTable;
  readonly closed: () => boolean;
  /** Counts one store read for `a`'s type. */
  readonly counted: (a: Activation) => void;
  readonly discard: (a: Activation, reason: DeactivationReason, detail: string) => Promise<void>;
}

/**
 * The owner's re-check of every activation after its lease came back from a fence
 * (docs/protocol.md#owner-lease-and-fencing).
 */
export class LeaseRecheck {
  /** Set from a lease regained until every activation is checked against the store again. */
  pending = false;
  /** Counts `run()` passes: only the latest may open admission (an older one yields to it). */
  private pass = 0;

  constructor(private readonly deps: LeaseRecheckDeps) {}

  /**
   * The lease came back after a fence: admission stays shut until every activation is read again;
   * one another node took over meanwhile (its lease looked gone to them) is deactivated `takenOver`,
   * never run again. A failed read keeps it shut and tries again shortly. A later call (the lease was
   * fenced and came back again meanwhile) starts over: only its pass opens admission.
   */
  async run(): Promise<void> {
    const { table, store, self } = this.deps;
    if (this.deps.closed()) return;
    const pass = ++this.pass;
    const superseded = (): boolean => this.deps.closed() || pass !== this.pass;
    this.pending = true;
    for (;;) {
      try {
        for (const a of table.all()) {
          if (superseded()) return;
          // A moving object is its move's to settle: it reads the record before the object runs here again.
          if (a.ingress !== undefined) a.revalidate = true;
          if (a.state !== 'ready' || a.ingress !== undefined) continue;
          this.deps.counted(a);
          const stored = await store.get(a.key);
          if (!a.heldIn(stored?.record, self))
            await this.deps.discard(a, 'takenOver', 'another node holds it now');
        }
        break;
      } catch {
        if (superseded()) return;
        await new Promise((r) => setTimeout(r, RECHECK_RETRY_MS));
      }
    }
    if (superseded()) return;
    this.pending = false;
    for (const a of table.all()) a.turns.fenceLifted();
  }
}
