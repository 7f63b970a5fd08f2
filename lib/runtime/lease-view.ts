import type { LeaseTiming, LocationDescriptor, NodeRun } from '../core/ports/index.js';
import type { Clock, OwnerLeaseView } from '../spot/index.js';

/**
 * The owner lease of every node run of the object mesh, as this process last read the MeshNode descriptors
 * (the owner lease is the owner node's own lease: docs/architecture.md#stores-and-authority). A run holds a
 * lease while the last successful read listed a descriptor of its NodeRid *and* generation; its admission
 * deadline is that read's time plus `ttlMs - marginMs` — never later than the owner itself stops admitting
 * after its last refresh that read could have seen. A failed read extends nothing
 * (docs/protocol.md#location-store-outage: a store outage never lengthens a lease), so deadlines lapse on
 * their own.
 */
export class DescriptorLeaseView implements OwnerLeaseView {
  private readonly deadlines = new Map<string, number>();

  constructor(
    private readonly timing: LeaseTiming,
    private readonly clock: Clock,
    /** Told of each run that was listed before and is not now (its lease ended). */
    private readonly onEnded: (run: NodeRun) => void = () => undefined,
  ) {}

  admissionDeadline(owner: NodeRun): number | undefined {
    return this.deadlines.get(`${owner.rid}\u0000${owner.nodeGeneration}`);
  }

  /** A successful full read of the mesh's descriptors. */
  read(list: readonly LocationDescriptor[]): void {
    const until = this.clock.now() + this.timing.ttlMs - this.timing.marginMs;
    const seen = new Set<string>();
    for (const d of list) {
      const key = `${d.rid}\u0000${d.generation}`;
      seen.add(key);
      this.deadlines.set(key, until);
    }
    for (const key of [...this.deadlines.keys()]) {
      if (seen.has(key)) continue;
      this.deadlines.delete(key);
      const [rid, nodeGeneration] = key.split('\u0000') as [string, string];
      this.onEnded({ rid, nodeGeneration });
    }
  }
}
