import { ZLinkError, errorMessage } from '../core/errors.js';
import type { ObjectKind } from '../core/kinds.js';
import { encodePayload } from '../core/wire/index.js';
import type { NodeRun, ObjectKey } from '../core/ports/index.js';
import { cacheFollowProblem } from '../core/options/index.js';
import type { ObjectRef } from '../core/objects/index.js';
import {
  controlMove,
  controlObject,
  destroyObject,
  ObjectCaller,
  type ObjectControlDeps,
  type ObjectSubmission,
  readAuthority,
} from './caller/index.js';
import { ObjectHost, runtimeCallRunner } from './owner/index.js';
import {
  AuthorityResolver,
  CachedResolver,
  Placement,
  type ReadyRoute,
  type ResolveResult,
  RouteCache,
  type RouteDropReason,
} from './resolve/index.js';
import {
  FollowRoutes,
  LeaveBarrier,
  MessageFollow,
  MovedCalls,
  type MoveRequest,
  type RelocationResult,
  Relocations,
} from './relocation/index.js';
import { ObjectReceiver } from './object-receive.js';
import { Memberships, type MemberTarget, memberTurn } from './membership/index.js';
import {
  bindingPusher,
  moveSessions,
  type SessionDeps,
  type SessionObjects,
  sessionObjects,
  sessionTurns,
} from './session/index.js';
import type { CreateOptions, ObjectLayerConfig } from './object-layer-config.js';
import { LocalTopics, SpotMulticast } from './multicast/index.js';

/**
 * The object layer of one runtime (docs/architecture.md#the-object-layer): the caller side (resolver,
 * positive route cache, calls), the owner side on an object server (activations), and the records between
 * them on the mesh. One per runtime, on its one object mesh.
 */
export class ObjectLayer {
  private readonly cache: RouteCache;
  /** The Message Follow routes of moves committed away from this node (relocation installs them). */
  readonly followRoutes: FollowRoutes;
  private readonly follow: MessageFollow;
  private readonly host: ObjectHost | undefined;
  private readonly resolver: CachedResolver;
  private readonly caller: ObjectCaller;
  /** This node's moves, either end; only on an object server. */
  private readonly relocations: Relocations | undefined;
  private readonly controlDeps: ObjectControlDeps;
  private readonly unsubscribe: (() => void)[] = [];
  /** Placement among the object servers hosting a type, for creations and moves. */
  private readonly placement: Placement;
  /** Actors joining and leaving Spots. */
  private readonly memberships: Memberships;
  /** A relocating drain's last step: every peer has dropped its routes to this node. */
  private readonly leaveBarrier: LeaveBarrier;
  /** What the Session owner's host of this node uses of this layer (see `sessionObjects`). */
  readonly sessionObjects: SessionObjects;
  /** Logical Multicast: publishes from here, events to this node's subscribed Spots. */
  readonly multicast: SpotMulticast;

  constructor(private readonly config: ObjectLayerConfig) {
    const { mesh, self, link, store, leases, clock, events } = config;
    this.placement = new Placement(link);
    this.leaveBarrier = new LeaveBarrier(link, self);
    this.followRoutes = new FollowRoutes(clock, config.options.messageFollowDurationMs);
    this.follow = new MessageFollow({
      mesh,
      link,
      routes: this.followRoutes,
      events,
      notices: config.options.messageFollowNotice,
    });
    this.cache = new RouteCache({
      maxAgeMs: config.options.routeCacheMaxAgeMs,
      clock,
      leases,
      onDrop: (route, reason) => this.routeDropped(route, reason),
    });
    this.resolver = new CachedResolver(new AuthorityResolver({ mesh, store, leases, clock }), this.cache);
    // What Pushes and a move's seals need: the sessions' side, no host (they are built before it).
    const toSessions: SessionDeps = { ...config, host: undefined, sessions: config.sessions };
    const pusher = bindingPusher(toSessions);
    this.multicast = new SpotMulticast({
      ...config,
      maxEventBytes: config.options.multicastMaxEventBytes,
      queueLimit: config.options.objectQueueLimit,
    });
    const local = config.role === 'server' ? new LocalTopics(link) : undefined;
    this.host =
      local &&
      new ObjectHost({
        ...config,
        queueLimit: config.options.objectQueueLimit,
        runtimeCall: runtimeCallRunner([memberTurn, sessionTurns(config)]),
        deactivated: (a, reason) => {
          this.memberships.deactivated(a, reason);
          // A destroyed Actor's bindings end with it: their Session owners hear it now, not at a relay.
          if (reason === 'destroyed') a.sessions?.endAll();
        },
        sessionPush: pusher,
        roomPush: pusher,
        publish: this.multicast,
        watch: local,
      });
    if (local && this.host) this.multicast.serve(local, this.host);
    const sessionDeps: SessionDeps = { ...toSessions, host: this.host };
    const host = this.host;
    this.relocations =
      host &&
      new Relocations({
        mesh,
        self,
        link,
        host,
        store,
        relocationStore: config.relocationStore,
        followRoutes: this.followRoutes,
        events,
        clock,
        leaseGeneration: config.leaseGeneration,
        placement: this.placement,
        // This node's own callers drop the route at once (a peer's learn it from the relay's notice).
        movedAway: (kind, id, source) => this.cache.invalidateStale(kind, id, source, 'moved'),
        relayed: () => this.follow.relayedNow(),
        sessions: moveSessions(toSessions),
        multicast: this.multicast,
        moveAt: (owner, req, type) =>
          controlMove(this.controlDeps, owner, req, type, `relocate ${req.kind} '${req.id}'`),
      });
    this.controlDeps = { mesh, self, link, pending: config.pending, host, relocations: this.relocations };
    const moved = host && new MovedCalls(host, this.follow, this.relocations, self);
    const receiver = new ObjectReceiver({
      config,
      cache: this.cache,
      control: this.controlDeps,
      leave: this.leaveBarrier,
      relocations: this.relocations,
      host,
      moved,
      sessions: sessionDeps,
      multicast: this.multicast,
    });
    this.caller = new ObjectCaller({
      mesh,
      self,
      link,
      resolver: this.resolver,
      cache: this.cache,
      // A local call is admitted as a peer's would be, Message Follow included.
      host: host && { host, elsewhere: moved },
      pending: config.pending,
      events,
      clock,
      getOrCreate: (kind, type, id, init, timeoutMs) =>
        this.create(kind, type, id, 'getOrCreate', { init, timeoutMs }),
      storeHealth: config.storeHealth,
    });
    this.sessionObjects = sessionObjects(sessionDeps, this.caller);
    this.memberships = new Memberships({
      mesh,
      clock,
      call: (sub) => this.caller.call(sub),
      authority: async (kind, id, what) => (await this.read({ mesh, kind, id }, undefined, what)).record,
      relocate: (req) => this.relocate(req),
    });
    this.unsubscribe.push(
      // A route read before the outage may be older than what changed while nobody could read
      // (docs/protocol.md#the-route-cache).
      config.storeHealth.onRecovered(() => this.cache.storeRecovered()),
      receiver.listen(),
    );
  }

  /** A cached route went (see `RouteCache`): the caller keeps behind it, and a peer's news is told. */
  private routeDropped(route: ReadyRoute, reason: RouteDropReason): void {
    // Calls sent on it may still be travelling: the next call there keeps behind them (`RouteChanges`).
    // A lost owner's run took what was in flight to it along: nothing to keep behind.
    if (reason !== 'evicted' && reason !== 'ownerRunEnded') this.caller.routeChanges.left(route);
    if (reason === 'expired' || reason === 'leaseEnded') return;
    this.config.events.emit({
      type: 'object_route',
      result: 'invalidated',
      mesh: this.config.mesh,
      objectKind: route.key.kind,
      id: route.key.id,
      reason,
    });
  }

  /** A call by global id (see `ObjectCaller.call`). */
  call(sub: ObjectSubmission): Promise<unknown> {
    return this.caller.call(sub);
  }

  /**
   * Changes `routeCacheMaxAgeMs` at run time: entries made from now on get it, existing ones keep the
   * lifetime they were made with (docs/protocol.md#the-route-cache). `InvalidArgument` for a value that is
   * not an integer >= 0 or breaks the rule against Message Follow (at least 5000 ms shorter than
   * `messageFollowDurationMs`).
   */
  setRouteCacheMaxAge(ms: number): void {
    this.checkPair('routeCacheMaxAgeMs', ms, ms, this.followRoutes.followDurationMs);
    this.cache.setMaxAgeMs(ms);
  }

  /**
   * Changes `messageFollowDurationMs` at run time: moves committed from now on relay for the new duration,
   * routes installed before keep theirs (docs/protocol.md#message-follow). `InvalidArgument` as
   * `setRouteCacheMaxAge`.
   */
  setMessageFollowDuration(ms: number): void {
    this.checkPair('messageFollowDurationMs', ms, this.cache.maxAgeMs, ms);
    this.followRoutes.setDurationMs(ms);
  }

  /** The one rule between the two, against the values in force now (a bad number: the setter's own check). */
  private checkPair(argument: string, ms: number, cacheMs: number, followMs: number): void {
    const problem = Number.isSafeInteger(ms) && ms >= 0 ? cacheFollowProblem(cacheMs, followMs) : undefined;
    if (problem !== undefined)
      throw new ZLinkError('InvalidArgument', `${argument}: ${problem}`, { details: { argument } });
  }

  /** What a call to (`kind`, `id`) would find now: the cached route, else one store read. */
  resolve(kind: ObjectKind, id: string): Promise<ResolveResult> {
    return this.resolver.resolve(kind, id);
  }

  /**
   * Creates or gets-or-creates on the node placement picks: `options.node`, else this node when it
   * hosts the type, else one of the object servers that host it, in turn. Ends `NotFound` when no
   * ready node hosts the type (or `options.node` does not), plus what `ObjectHost.activate` ends with.
   */
  create(
    kind: ObjectKind,
    type: string,
    id: string,
    mode: 'create' | 'getOrCreate',
    options: CreateOptions,
  ): Promise<ObjectRef> {
    const what = `${mode} ${kind} '${id}'`;
    const hosts = this.host?.hosts(kind, type) === true;
    const takesHere = hosts ? !this.draining : ('notHosted' as const);
    const owner = this.placement.forCreation(this.config.self.rid, takesHere, kind, type, options.node, what);
    if (typeof owner !== 'string') return Promise.reject(owner);
    const { self } = this.config;
    const host = this.host;
    if (owner === self.rid && host)
      return host.activate(kind, type, id, mode, options.init, options.timeoutMs);
    let init: Uint8Array | undefined;
    try {
      init = options.init === undefined ? undefined : encodePayload(options.init);
    } catch (error) {
      return Promise.reject(
        new ZLinkError('InvalidArgument', `${what}: init cannot be encoded: ${errorMessage(error)}`),
      );
    }
    return controlObject(
      this.controlDeps,
      owner,
      mode,
      { kind, id, type, objectGeneration: 0 },
      init,
      options.timeoutMs,
      what,
    );
  }

  /**
   * Destroys the incarnation `ref` names, on its owner, after one store read to find the owner: see
   * `destroyObject`.
   */
  destroy(ref: ObjectRef, timeoutMs: number): Promise<void> {
    return destroyObject(
      { ...this.config, host: this.host, control: this.controlDeps, cache: this.cache, read: this.read },
      ref,
      timeoutMs,
    );
  }

  /** The authority record of `key`, read once (see `readAuthority`), counted in this node's metrics. */
  private readonly read = (key: ObjectKey, type: string | undefined, what: string) =>
    readAuthority(
      this.config.store,
      key,
      type,
      what,
      (kind, t) => this.caller.metricsOf(kind, t).storeReads++,
    );

  /**
   * Moves the object to another object server, asking its owner (one store read finds it): see
   * `Relocations.move` for how it ends; `NotFound` when the id has no record.
   */
  async relocate(req: MoveRequest): Promise<RelocationResult> {
    const what = `relocate ${req.kind} '${req.id}'`;
    const stored = await this.read({ mesh: this.config.mesh, kind: req.kind, id: req.id }, undefined, what);
    const { owner } = stored.record;
    const { self } = this.config;
    if (owner.rid === self.rid && owner.nodeGeneration === self.nodeGeneration && this.relocations)
      return this.relocations.move(req);
    return controlMove(this.controlDeps, owner.rid, req, stored.record.type, what);
  }

  /**
   * Drain: no object is placed here any more; with `onDrain: 'relocate'` (the default) every object of
   * a relocatable class that has somewhere to go moves to another object server, then this node keeps
   * relaying calls that still come for them until none came for `RELAY_QUIET_MS` (callers have learned
   * the new owners), within `deadlineMs` (see `drainNode`). Whatever did not move is released at close,
   * as with `'deactivate'`.
   */
  async drain(deadlineMs: number): Promise<void> {
    if (!this.relocations || this.draining) return;
    this.draining = true;
    const relocate = this.config.options.onDrain === 'relocate';
    await this.relocations.drain(
      deadlineMs,
      relocate,
      () => this.follow.lastRelayAt,
      (ms) => this.leaveBarrier.leave(ms),
    );
  }

  private draining = false;

  /** Makes an Actor a member of a Spot: see `Memberships.join` for how it ends. */
  join(actor: MemberTarget, spot: MemberTarget, timeoutMs: number): ReturnType<Memberships['join']> {
    return this.memberships.join(actor, spot, timeoutMs);
  }

  /** Takes an Actor out of its Spot: see `Memberships.leave` for how it ends. */
  leave(actor: MemberTarget, timeoutMs: number): Promise<string> {
    return this.memberships.leave(actor, timeoutMs);
  }

  /** Node run `run` left the object mesh's descriptors (its lease ended): routes to it go. */
  ownerRunEnded(run: NodeRun): void {
    this.cache.ownerRunEnded(run);
  }

  /**
   * This node's lease is held again after a fence: every activation is checked against the store
   * before admission opens (see `ObjectHost.leaseRegained`). Never rejects.
   */
  leaseRegained(): Promise<void> {
    return this.host?.leaseRegained() ?? Promise.resolve();
  }

  snapshot(): {
    readonly routeCacheSize: number;
    /** Whether this object server admits no object work now (its lease fenced, or re-checking after one). */
    readonly fenced: boolean;
    readonly activations: ReturnType<ObjectHost['snapshot']>;
  } {
    const host = this.host;
    return {
      routeCacheSize: this.cache.size,
      fenced: host?.fenced ?? false,
      activations: host?.snapshot() ?? [],
    };
  }

  async close(): Promise<void> {
    await this.relocations?.close(this.config.closeTimeoutMs);
    this.multicast.close();
    await this.host?.close();
    this.caller.waits.close();
    for (const off of this.unsubscribe.splice(0)) off();
  }
}
