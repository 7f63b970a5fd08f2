import { type NodeRun, ZLinkError, isCount, isName, isStr } from '../../core/index.js';
import type { ReadyRoute } from '../resolve/index.js';
import { wireAddress } from '../wire/index.js';

/**
 * A session's binding to one Actor on its Session owner (spot-actor-routing §3.1): the route verified
 * at bind time and stored here — never written to the Location or Relocation Store — and the identity
 * that route is checked against on every relay, push and end notice.
 */
export interface BindingRoute {
  readonly actorId: string;
  readonly type: string;
  readonly objectGeneration: number;
  readonly bindingGeneration: number;
  /** The stored route: the Actor owner's run and the fences it holds the Actor on. */
  readonly route: ReadyRoute;
}

/** A bind's answer (the route the Actor's owner holds it on), read into the route stored for relays. */
export function bindingRouteOf(
  mesh: string,
  actorId: string,
  bindingGeneration: number,
  answer: unknown,
): BindingRoute {
  if (!Array.isArray(answer)) throw new ZLinkError('ProtocolError', `bind actor '${actorId}': not a route`);
  const [type, rid, nodeGeneration, aog, olg, objectGeneration] = answer as unknown[];
  if (
    !isName(type) ||
    !isName(rid) ||
    !isStr(nodeGeneration) ||
    !isCount(aog) ||
    !isCount(olg) ||
    !isCount(objectGeneration)
  )
    throw new ZLinkError('ProtocolError', `bind actor '${actorId}': the owner's answer is not a route`);
  const owner: NodeRun = { rid, nodeGeneration };
  const fences = { owner, objectGeneration, authorityOwnerGeneration: aog, ownerLeaseGeneration: olg };
  const route: ReadyRoute = {
    tag: 'ReadyRoute',
    key: { mesh, kind: 'actor', id: actorId },
    type,
    ...fences,
    storeVersion: 0,
    // The owner's own admission is the bound that counts: it refuses while its lease is fenced.
    admissionDeadline: Number.POSITIVE_INFINITY,
    address: wireAddress('actor', actorId, fences),
  };
  return { actorId, type, objectGeneration, bindingGeneration, route };
}

/**
 * The bindings of one session, by Actor id, in the order they were made: the first is the primary,
 * which the client's frames without a `@SessionHandler` are relayed to. A rebind of the same Actor id
 * replaces its entry at once (the new route only after its owner answered: §3.1's atomic switch).
 */
export class SessionBindings {
  private readonly byActor = new Map<string, BindingRoute>();
  private generation = 0;

  /** The next binding generation of this session (a bind's identity: a late answer never wins). */
  nextGeneration(): number {
    return ++this.generation;
  }

  get primary(): BindingRoute | undefined {
    for (const b of this.byActor.values()) return b;
    return undefined;
  }

  get(actorId: string): BindingRoute | undefined {
    return this.byActor.get(actorId);
  }

  /** Installs `b` unless a later bind of the same Actor already did. */
  set(b: BindingRoute): boolean {
    const now = this.byActor.get(b.actorId);
    if (now !== undefined && now.bindingGeneration > b.bindingGeneration) return false;
    this.byActor.set(b.actorId, b);
    return true;
  }

  delete(actorId: string): BindingRoute | undefined {
    const b = this.byActor.get(actorId);
    this.byActor.delete(actorId);
    return b;
  }

  all(): BindingRoute[] {
    return [...this.byActor.values()];
  }

  get size(): number {
    return this.byActor.size;
  }
}
