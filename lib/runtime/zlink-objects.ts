import {
  type ActorRef,
  type ObjectKind,
  type ObjectRef,
  type SpotRef,
  invalidArgument,
} from '../core/index.js';
import type { ObjectLayer, RelocationResult, ResolveResult } from '../spot/index.js';

/** Per-call options of creation and destroy. */
export interface ObjectCreateOptions {
  /** The NodeRid of the object server to own it; default: this node when it hosts the type, else one that does, in turn. */
  node?: string;
  /** Handed to `onActivate(ctx)` as `ctx.init`; travels as msgpack. */
  init?: unknown;
  /** Deadline of the whole creation; defaults to the runtime's `requestTimeoutMs`. */
  timeoutMs?: number;
}

export interface ObjectDestroyOptions {
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

/** How a move ended: `committed` on `owner` (the new owner's NodeRid), or `aborted` with why (the object stayed). */
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
