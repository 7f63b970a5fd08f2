import type { ObjectActivationSnapshot, ObjectKind } from '../../core/index.js';
import type { Activation } from './activation.js';

/**
 * The activations one node holds, by kind and id: what the host admits calls to, and what a move
 * adds (the target, at cutover) or takes away (the source, at commit). At most one per id.
 */
export class ActivationTable {
  private readonly byKind: Record<ObjectKind, Map<string, Activation>> = {
    spot: new Map(),
    actor: new Map(),
  };

  get(kind: ObjectKind, id: string): Activation | undefined {
    return this.byKind[kind].get(id);
  }

  has(kind: ObjectKind, id: string): boolean {
    return this.byKind[kind].has(id);
  }

  set(a: Activation): void {
    this.byKind[a.key.kind].set(a.key.id, a);
  }

  /** Removes `a` if it is still the one held for its id (a later one for the id stays). */
  delete(a: Activation): void {
    if (this.byKind[a.key.kind].get(a.key.id) === a) this.byKind[a.key.kind].delete(a.key.id);
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
