import { invalidArgument } from '../core/errors.js';
import type { ObjectKind } from '../core/kinds.js';
import type { ActorRef, ObjectRef, SpotRef } from '../core/objects/index.js';
import type { MemberTarget, ObjectLayer, RelocationResult, ResolveResult } from '../spot/index.js';

/** Per-call options of creation and destroy. */
export interface ObjectCreateOptions {
  /**
   * The NodeRid of the object server to own it; default: this node when it hosts the type, else one that
   * does, in turn.
   */
  node?: string;
  /** Handed to `onActivate(ctx)` as `ctx.init`; travels as msgpack. */
  init?: unknown;
  /** Deadline of the whole creation; defaults to the runtime's `requestTimeoutMs`. */
  timeoutMs?: number;
}

export interface ObjectDestroyOptions {
  timeoutMs?: number;
}

/** Per-call options of `join` and `leave`. */
export interface ObjectMembershipOptions {
  /** Deadline of the whole change (a move to the Spot's owner included); defaults to `requestTimeoutMs`. */
  timeoutMs?: number;
}

/** Per-move options of `relocate`. */
export interface ObjectRelocateOptions {
  /** The NodeRid of the object server to move to; default: another server hosting the type, in turn. */
  target?: string;
  /**
   * How long the move may take until the target has restored the object (its relay-ready); past it the
   * move aborts and the object goes on where it was. Defaults to the runtime's `requestTimeoutMs`.
   */
  timeoutMs?: number;
}

/**
 * How a move ended: `committed` on `owner` (the new owner's NodeRid), or `aborted` with why (the object
 * stayed).
 */
export type ObjectRelocation = RelocationResult;

/**
 * What `resolve(kind, id)` found: `ReadyRoute` (owner and fences), `Missing` (no record), `Unavailable`
 * (it exists but cannot take messages: `reason`), `StoreFailure` (the store did not answer).
 */
export type ObjectResolution = ResolveResult;

/** What the facade needs from the runtime. */
export interface ObjectsHost {
  /** The started object layer, or why there is none (`NotConfigured`, `Unavailable`, `Shutdown`). */
  objectLayer(what: string): Promise<ObjectLayer>;
  readonly requestTimeoutMs: number;
}

/**
 * Creating, destroying and resolving Spots and Actors (injectable in Nest). Calls to objects go
 * through `ZLinkRouteClient.toSpot(id)` / `toActor(id)`; nothing here sends them.
 */
export class ZLinkObjects {
  constructor(private readonly host: ObjectsHost) {}

  /**
   * Creates Spot `id` of `type` and resolves with its ref once it is Ready (its `onActivate` done).
   * Ends `InvalidOperation` when the id exists (`details.reason: 'exists'`, `details.ref`) or is taken
   * by another type, `NotFound` when no ready object server hosts the type (or `node` does not),
   * `Rejected` while the owner's lease is fenced, `Unavailable` when the store or the owner could not
   * finish it by the deadline (`details.resolver: 'StoreFailure'` for the store; `details.reason:
   * 'activationTimeout'` for an `onActivate` still running, whose claim goes once it returns),
   * `RemoteError` with what the class's construction or `onActivate` threw, in `remote.code` (a
   * `ZLinkError` thrown there keeps its code; nothing stays created), `InvalidArgument`,
   * `NotConfigured` (no object mesh here) or `Shutdown`. However many processes create one id at
   * once, exactly one activation results. An id whose owner's lease is gone (its process died) counts
   * as free: the creation takes it over with a new ObjectGeneration.
   */
  createSpot(type: string, id: string, options?: ObjectCreateOptions): Promise<SpotRef> {
    return this.create('spot', type, id, 'create', options) as Promise<SpotRef>;
  }

  /** `createSpot` for an Actor. */
  createActor(type: string, id: string, options?: ObjectCreateOptions): Promise<ActorRef> {
    return this.create('actor', type, id, 'create', options) as Promise<ActorRef>;
  }

  /**
   * The Ready Spot `id` (its ref), created first when there is none — or when its owner's lease is
   * gone, which takes it over with a new ObjectGeneration. Ends as `createSpot` does, except that an
   * existing Spot of the type is the result, not an error.
   */
  getOrCreateSpot(type: string, id: string, options?: ObjectCreateOptions): Promise<SpotRef> {
    return this.create('spot', type, id, 'getOrCreate', options) as Promise<SpotRef>;
  }

  /** `getOrCreateSpot` for an Actor. */
  getOrCreateActor(type: string, id: string, options?: ObjectCreateOptions): Promise<ActorRef> {
    return this.create('actor', type, id, 'getOrCreate', options) as Promise<ActorRef>;
  }

  /**
   * Destroys the incarnation `ref` names: calls waiting for it end `Unavailable`, the running one
   * finishes, `onDeactivate(ctx, 'destroyed')` runs, then its record is deleted; resolves after that
   * (a call from then on ends `NotFound`). Ends `InvalidOperation` when `ref` is not the current
   * incarnation (`details.reason: 'staleRef'`), `NotFound` when the id has no object, `Unavailable`
   * when the store or the owner cannot be reached.
   */
  async destroy(ref: ObjectRef, options?: ObjectDestroyOptions): Promise<void> {
    const what = `destroy ${String(ref?.kind)} '${String(ref?.id)}'`;
    if (typeof ref !== 'object' || ref === null || (ref.kind !== 'spot' && ref.kind !== 'actor'))
      throw invalidArgument('ref', 'must be a SpotRef or ActorRef returned by a creation');
    const layer = await this.host.objectLayer(what);
    await layer.destroy(ref, this.timeout(options?.timeoutMs));
  }

  /**
   * Moves a live Spot (an id) or a Spot or Actor (a ref, or `{ kind, id }`) to another object server,
   * with its state (`capture()` → `restore(state, ctx)`), its waiting calls and its timers (those set
   * with a label naming one of its methods), while calls keep arriving: none is lost or run twice, and
   * each sender's calls run in the order sent. Resolves `committed` with the new owner (and `pauseMs`),
   * or `aborted` with the reason when the move could not finish — the target refused, failed or was
   * lost, or had not restored the object within `timeoutMs` — and the object goes on where it was with
   * every call it held (or, when another node took it over meanwhile, ends there). Rejects, nothing
   * moved: `NotFound` (no such object, or no other server hosting its type, or `target` is not one),
   * `InvalidOperation` (a ref of another incarnation, a class not declared `relocatable`, `target` is
   * its owner), `Unavailable` (not Ready, already moving, the store or the owner unreachable),
   * `Rejected` (the owner's lease is fenced), `Configuration` (no Relocation Store), `InvalidArgument`,
   * `NotConfigured`, `Shutdown`.
   */
  async relocate(
    object: string | ObjectRef | { readonly kind: ObjectKind; readonly id: string },
    options?: ObjectRelocateOptions,
  ): Promise<ObjectRelocation> {
    const target = typeof object === 'string' ? { kind: 'spot' as const, id: object } : object;
    if (typeof target !== 'object' || target === null || (target.kind !== 'spot' && target.kind !== 'actor'))
      throw invalidArgument(
        'object',
        "must be a Spot id, a SpotRef or ActorRef, or { kind: 'spot' | 'actor', id }",
      );
    if (typeof target.id !== 'string' || target.id === '')
      throw invalidArgument('id', 'must be a non-empty string');
    if (options?.target !== undefined && (typeof options.target !== 'string' || options.target === ''))
      throw invalidArgument('target', 'must be a non-empty NodeRid');
    const what = `relocate ${target.kind} '${target.id}'`;
    const timeoutMs = this.timeout(options?.timeoutMs);
    const layer = await this.host.objectLayer(what);
    return layer.relocate({
      kind: target.kind,
      id: target.id,
      objectGeneration: 'objectGeneration' in target ? (target as ObjectRef).objectGeneration : undefined,
      target: options?.target,
      timeoutMs,
    });
  }

  /**
   * Makes an Actor (an id or its ref) a member of a Spot (an id or its ref). A Spot and its members
   * run on one node: an Actor that lives elsewhere first moves to the Spot's owner (its class must be
   * `relocatable`), and the members held beside a Spot move with it when it moves. The Spot hears the
   * join in its turn — `onActorJoin(ctx, actorRef)`, which may refuse by throwing — and the Actor sees
   * it in `ctx.membership.spot`. An Actor is a member of one Spot at a time. Resolves with both refs.
   * Ends `InvalidOperation` (a ref of another incarnation: `staleRef`; a member of another Spot:
   * `alreadyMember`; an Actor class that cannot move), `NotFound` (either object is missing, or the
   * Spot's owner hosts no such Actor type), `Unavailable` (the move to the Spot's owner aborted:
   * `details.reason: 'colocation'`; either object unreachable), `RemoteError` with what `onActorJoin`
   * threw (nothing changed), `Timeout`, `InvalidArgument`, `NotConfigured`, `Shutdown`. Joining the
   * Spot an Actor is in already resolves as it is.
   */
  async join(
    actor: string | ActorRef,
    spot: string | SpotRef,
    options?: ObjectMembershipOptions,
  ): Promise<{ readonly actor: ActorRef; readonly spot: SpotRef }> {
    const a = memberTarget('actor', actor);
    const s = memberTarget('spot', spot);
    const timeoutMs = this.timeout(options?.timeoutMs);
    const layer = await this.host.objectLayer(`join actor '${a.id}' to spot '${s.id}'`);
    return layer.join(a, s, timeoutMs);
  }

  /**
   * Takes an Actor (an id or its ref) out of its Spot, which hears it in its turn:
   * `onActorLeave(ctx, actorId, 'left')`. Resolves with the id of the Spot it left. Ends
   * `InvalidOperation` when the Actor is in no Spot (`notMember`) or the ref is stale, `NotFound`
   * when the Actor is missing, `RemoteError` with what `onActorLeave` threw (it has left all the
   * same), `Unavailable`, `Timeout`, `InvalidArgument`, `NotConfigured`, `Shutdown`. An Actor that is
   * destroyed or otherwise deactivated leaves its Spot by itself (the reason says how).
   */
  async leave(actor: string | ActorRef, options?: ObjectMembershipOptions): Promise<string> {
    const a = memberTarget('actor', actor);
    const timeoutMs = this.timeout(options?.timeoutMs);
    const layer = await this.host.objectLayer(`leave: actor '${a.id}'`);
    return layer.leave(a, timeoutMs);
  }

  /**
   * Changes how long a confirmed route is reused (`routeCacheMaxAgeMs`; 0 stops caching): routes cached
   * from now on get the new age, those cached before keep theirs. `InvalidArgument` for a negative or
   * fractional value, or one not at least 5000 ms below `messageFollowDurationMs` (when both are on).
   */
  async setRouteCacheMaxAge(ms: number): Promise<void> {
    const layer = await this.host.objectLayer('setRouteCacheMaxAge');
    layer.setRouteCacheMaxAge(ms);
  }

  /**
   * Changes how long a node an object moved away from keeps handing messages on
   * (`messageFollowDurationMs`; 0 stops Message Follow for later moves): moves committed from now on
   * get the new duration, earlier ones keep theirs. `InvalidArgument` for a negative or fractional value,
   * or one that leaves `routeCacheMaxAgeMs` less than 5000 ms below it (when both are on).
   */
  async setMessageFollowDuration(ms: number): Promise<void> {
    const layer = await this.host.objectLayer('setMessageFollowDuration');
    layer.setMessageFollowDuration(ms);
  }

  /** What a call to (`kind`, `id`) would find now (the cached route, else one store read); never creates. */
  async resolve(kind: ObjectKind, id: string): Promise<ObjectResolution> {
    const layer = await this.host.objectLayer(`resolve ${String(kind)} '${String(id)}'`);
    return layer.resolve(kind, id);
  }

  private async create(
    kind: ObjectKind,
    type: string,
    id: string,
    mode: 'create' | 'getOrCreate',
    options: ObjectCreateOptions | undefined,
  ): Promise<ObjectRef> {
    if (typeof type !== 'string' || type === '') throw invalidArgument('type', 'must be a non-empty string');
    if (typeof id !== 'string' || id === '') throw invalidArgument('id', 'must be a non-empty string');
    if (options?.node !== undefined && (typeof options.node !== 'string' || options.node === ''))
      throw invalidArgument('node', 'must be a non-empty NodeRid');
    const layer = await this.host.objectLayer(`${mode} ${kind} '${id}'`);
    return layer.create(kind, type, id, mode, {
      node: options?.node,
      init: options?.init,
      timeoutMs: this.timeout(options?.timeoutMs),
    });
  }

  private timeout(ms: number | undefined): number {
    const t = ms ?? this.host.requestTimeoutMs;
    if (!Number.isFinite(t) || t <= 0)
      throw invalidArgument('timeoutMs', `must be a positive number, got ${t}`);
    return t;
  }
}

/** An object named by id or by a ref of `kind` (whose incarnation is then checked), or `InvalidArgument`. */
function memberTarget(kind: 'spot' | 'actor', v: string | ObjectRef): MemberTarget {
  if (typeof v === 'string') {
    if (v === '') throw invalidArgument(kind, 'must be a non-empty id or a ref');
    return { id: v, objectGeneration: undefined };
  }
  if (typeof v !== 'object' || v === null || v.kind !== kind || typeof v.id !== 'string' || v.id === '')
    throw invalidArgument(kind, `must be a ${kind === 'spot' ? 'Spot' : 'Actor'} id or its ref`);
  return { id: v.id, objectGeneration: v.objectGeneration };
}
