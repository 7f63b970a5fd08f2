import type { ObjectKind } from '../../core/kinds.js';
import type { ObjectActivationSnapshot } from '../../core/observe/index.js';
import type { Activation } from './activation.js';

/** What learns of the table's changes as they happen. */
export interface ActivationWatch {
  added(a: Activation): void;
  removed(a: Activation): void;
}

/**
 * The activations one node holds, by kind and id: what the host admits calls to, and what a move
 * adds (the target, at cutover) or takes away (the source, at commit). At most one per id.
 */
export class ActivationTable {
  private readonly byKind: Record<ObjectKind, Map<string, Activation>> = {
    spot: new Map(),
    actor: new Map(),
  };

  /** @param watch told of every activation entering and leaving (Logical Multicast's subscriptions). */
  constructor(private readonly watch?: ActivationWatch) {}

  get(kind: ObjectKind, id: string): Activation | undefined {
    return this.byKind[kind].get(id);
  }

  has(kind: ObjectKind, id: string): boolean {
    return this.byKind[kind].has(id);
  }

  set(a: Activation): void {
    const ids = this.byKind[a.key.kind];
    const old = ids.get(a.key.id);
    if (old === a) return;
    ids.set(a.key.id, a);
    if (old) this.watch?.removed(old);
    this.watch?.added(a);
  }

  /** Removes `a` if it is still the one held for its id (a later one for the id stays). */
  delete(a: Activation): void {
    if (this.byKind[a.key.kind].get(a.key.id) !== a) return;
    this.byKind[a.key.kind].delete(a.key.id);
    this.watch?.removed(a);
  }

  /** Every activation, as a copy: safe to change the table while going through it. */
  all(): Activation[] {
    return [...this.byKind.spot.values(), ...this.byKind.actor.values()];
  }

  get size(): number {
    return this.byKind.spot.size + this.byKind.actor.size;
  }

  /** Turns waiting in the objects of one type (its queue-depth gauge). */
  depth(kind: ObjectKind, type: string): number {
    let n = 0;
    for (const a of this.byKind[kind].values()) if (a.cls.type === type) n += a.turns.depth;
    return n;
  }

  snapshot(): ObjectActivationSnapshot[] {
    return this.all().map((a) => ({
      kind: a.key.kind,
      type: a.cls.type,
      id: a.key.id,
      objectGeneration: a.authority.objectGeneration,
      state: a.state,
      queued: a.turns.depth,
      busy: a.turns.busy,
      ...(a.membership.spot !== undefined && { spot: a.membership.spot }),
      ...(a.membership.joined.size > 0 && { members: a.membership.members() }),
    }));
  }
}
