import { ZLinkError } from '../../core/errors.js';
import { isCount, isName, isStr } from '../../core/wire/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import type { CallSink } from '../../core/calls/index.js';
import type { ReadyRoute } from '../resolve/index.js';
import type { ObjectSubmission } from '../caller/index.js';
import { wireAddress } from '../wire/index.js';

/**
 * A session's binding to one Actor on its Session owner (docs/protocol.md#session-bindings): the route
 * verified at bind time and stored here — never written to the Location or Relocation Store — and the
 * identity that route is checked against on every relay, push and end notice.
 */
export interface BindingRoute {
  readonly actorId: string;
  readonly type: string;
  readonly objectGeneration: number;
  readonly bindingGeneration: number;
  /** The stored route: the Actor owner's run and the fences it holds the Actor on. */
  readonly route: ReadyRoute;
  /**
   * Set once the binding leads nowhere — its owner run left the mesh (`ownerLost`), or its incarnation
   * was destroyed (`bindingEnded`) — with what relays say: they end `Unavailable` until a new bind.
   */
  readonly lost?: LostBinding;
}

/** Why a binding leads nowhere (`details.reason` of the relays refused for it), and what to tell. */
export interface LostBinding {
  readonly reason: 'ownerLost' | 'bindingEnded';
  readonly detail: string;
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

/** What a relay on a lost binding ends with (`what` names the relay). */
export function lostError(what: string, lost: LostBinding): ZLinkError {
  return new ZLinkError('Unavailable', `${what}: ${lost.detail}`, { details: { reason: lost.reason } });
}

/** A relay held while its binding is sealed for a move: submitted, in order, when the seal ends. */
export interface HeldRelay {
  readonly sub: ObjectSubmission;
  /** Where its end goes, once: a refusal here, or the call's end once submitted. */
  readonly sink: CallSink;
}

/**
 * A binding sealed by its Actor's move (docs/protocol.md#bound-actors-that-move, record 42): what waits for
 * the route, and the timeout.
 */
interface Seal {
  readonly relocationId: string;
  readonly held: HeldRelay[];
  readonly timer: NodeJS.Timeout;
}

/**
 * The bindings of one session, by Actor id, in the order they were made: the first is the primary, which the
 * client's frames without a `@SessionHandler` are relayed to. A rebind of the same Actor id replaces its
 * entry at once (the new route only after its owner answered: docs/protocol.md#session-bindings).
 */
export class SessionBindings {
  private readonly byActor = new Map<string, BindingRoute>();
  private readonly seals = new Map<string, Seal>();
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

  /**
   * The binding of `actorId` (of `bindingGeneration`, when given: a later bind is left alone) leads
   * nowhere now; it stays, so relays say why, until rebound. `false` when there was nothing to lose.
   */
  lose(actorId: string, lost: LostBinding, bindingGeneration?: number): boolean {
    const b = this.byActor.get(actorId);
    if (b === undefined || b.lost !== undefined) return false;
    if (bindingGeneration !== undefined && b.bindingGeneration !== bindingGeneration) return false;
    this.byActor.set(actorId, { ...b, lost });
    for (const h of this.unseal(actorId)) h.sink.reject(lostError(`actor '${actorId}'`, lost));
    return true;
  }

  delete(actorId: string): BindingRoute | undefined {
    const b = this.byActor.get(actorId);
    this.byActor.delete(actorId);
    for (const h of this.unseal(actorId))
      h.sink.reject(new ZLinkError('Unavailable', `actor '${actorId}' is no longer bound`));
    return b;
  }

  /**
   * Seals the binding of `actorId` for move `relocationId`: relays for it are held from now on until the
   * move's route command (or `onTimeout` after `ms`). A second seal of the same move changes nothing.
   */
  seal(actorId: string, relocationId: string, ms: number, onTimeout: () => void): void {
    if (this.seals.get(actorId)?.relocationId === relocationId) return;
    for (const h of this.unseal(actorId))
      h.sink.reject(new ZLinkError('Unavailable', `actor '${actorId}' moved again`));
    const timer = setTimeout(onTimeout, ms);
    timer.unref();
    this.seals.set(actorId, { relocationId, held: [], timer });
  }

  /** Where a relay for a sealed binding waits; `undefined` when the binding is not sealed. */
  held(actorId: string): HeldRelay[] | undefined {
    return this.seals.get(actorId)?.held;
  }

  /** Whether `actorId` is sealed by move `relocationId`. */
  sealedBy(actorId: string, relocationId: string): boolean {
    return this.seals.get(actorId)?.relocationId === relocationId;
  }

  /** Ends the seal of `actorId`: returns what it held, in order. */
  unseal(actorId: string): HeldRelay[] {
    const seal = this.seals.get(actorId);
    if (seal === undefined) return [];
    clearTimeout(seal.timer);
    this.seals.delete(actorId);
    return seal.held;
  }

  /** Every seal ends (the session closed): what they held, to be refused. */
  unsealAll(): HeldRelay[] {
    return [...this.seals.keys()].flatMap((actorId) => this.unseal(actorId));
  }

  all(): BindingRoute[] {
    return [...this.byActor.values()];
  }

  get size(): number {
    return this.byActor.size;
  }
}
