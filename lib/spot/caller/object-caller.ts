import { ZLinkError, cancelledError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import { type ZLinkEvents, ObjectTypeMetrics } from '../../core/observe/index.js';
import { type CallSink, type PendingRequests, RESOLVED } from '../../core/calls/index.js';
import type { MeshLink, NodeRun, ObjectKey, StoreHealth } from '../../core/ports/index.js';
import { CANDIDATE_WAIT_CAP_MS } from '../../core/options/index.js';
import { type OperationId, operationIdString } from '../wire/index.js';
import { currentTurn, selfRequestRefusal } from '../execution/index.js';
import { type CachedResolver, type Clock, type ReadyRoute, type RouteCache } from '../resolve/index.js';
import { type LocalOwner, localCall } from './local-call.js';
import { CallName, type ObjectSubmission } from './object-submission.js';
import { PeerWaits } from './peer-waits.js';
import { remoteRequest, remoteSend } from './remote-call.js';
import { untilDeadline } from './store-deadline.js';
import { RouteChanges, flushSubmission } from './route-changes.js';
import { FLUSH_WAIT_MS, STORE_RETRY_MS } from '../timing/index.js';

export interface ObjectCallerConfig {
  readonly mesh: string;
  readonly self: NodeRun;
  readonly link: MeshLink;
  readonly resolver: CachedResolver;
  readonly cache: RouteCache;
  /** The owner side here, on an object server. */
  readonly host: LocalOwner | undefined;
  readonly pending: PendingRequests;
  readonly events: ZLinkEvents;
  readonly clock: Clock;
  /** Get-or-create for Instance intent (the runtime's creation path, with placement). */
  readonly getOrCreate: (
    kind: ObjectKind,
    type: string,
    id: string,
    init: unknown,
    timeoutMs: number,
  ) => Promise<unknown>;
  /** Told when a call gives up on a store read that did not answer by its deadline. */
  readonly storeHealth: StoreHealth;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The caller side of calls by global id (docs/protocol.md#resolving-a-global-id): the positive route cache,
 * the store on a miss, then exactly one owner — this node's own host, or one peer over the mesh. A call ends
 * exactly once; none is ever resent to another owner, and a failure is never cached.
 */
export class ObjectCaller {
  readonly waits: PeerWaits;
  /** Keeps each sender's order to an object whose route changed (moved): see `RouteChanges`. */
  readonly routeChanges = new RouteChanges((route) => this.flush(route));
  /** Flushes are the runtime's own requests: counted apart from the application's calls. */
  private readonly flushMetrics = new ObjectTypeMetrics();
  private operations = 0;
  private readonly operation: { readonly prefix: string; seq: number };
  private readonly metrics: Record<ObjectKind, Map<string, ObjectTypeMetrics>> = {
    spot: new Map(),
    actor: new Map(),
  };

  constructor(private readonly config: ObjectCallerConfig) {
    this.waits = new PeerWaits(config.link);
    // The node generation is random per process start: with a counter it names one operation of one
    // run, short enough to travel as a fixstr.
    this.operation = { prefix: `${config.self.nodeGeneration}:`, seq: 0 };
  }

  /**
   * Sends or requests. A send resolves once the owner's queue (here) or the mesh send queue (remote)
   * took it; a request with the handler's reply. Ends `NotFound` (Missing, without Instance intent),
   * `Unavailable` (the object is not Ready, its owner's lease is gone or the owner is not reachable,
   * the route was stale — the entry is dropped — or the store stayed down until the deadline:
   * `details.resolver = 'StoreFailure'`), `Rejected` (owner fenced, object queue full),
   * `InvalidOperation` (a request from the object to itself), `RemoteError` (the handler failed),
   * `Timeout`, `Cancelled`, `RouteError` (the owner was lost with the request in flight: it may have
   * run) or `Shutdown`.
   */
  call(sub: ObjectSubmission): Promise<unknown> {
    const { objectKind, id } = sub;
    const what = new CallName(sub);
    if (sub.messageKind === 'request' && currentTurn() !== undefined) {
      const self = selfRequestRefusal(String(what), { mesh: this.config.mesh, kind: objectKind, id });
      if (self) return Promise.reject(self);
    }
    if (sub.signal?.aborted) return Promise.reject(cancelledError(String(what), sub.signal));
    const now = this.config.clock.now();
    const deadline = now + sub.timeoutMs;
    return this.route(sub, deadline, what, now);
  }

  /**
   * A call on a route held already (a session's binding route, docs/protocol.md#session-bindings): no cache,
   * no store. Admitted on those fences, or followed once; else `Unavailable`, never re-resolved. Ends as
   * `call` does, once, in `sink`: a request to a ready peer (a relay's usual way) with no promise made
   * for it, a send queued at once before this returns. A refusal goes to `sink` too: nothing is thrown.
   */
  callOnRoute(route: ReadyRoute, sub: ObjectSubmission, sink: CallSink): void {
    const now = this.config.clock.now();
    const deadline = now + sub.timeoutMs;
    const what = new CallName(sub);
    const { owner } = route;
    if (
      sub.messageKind === 'request' &&
      !this.isSelf(owner) &&
      this.config.link.isReady(owner.rid, owner.nodeGeneration)
    ) {
      const m = this.counted(sub, route.type);
      remoteRequest(this.config, route, sub, this.nextOperation(), deadline, now, what, m, sink);
      return;
    }
    let ended: Promise<unknown>;
    try {
      ended = this.toOwner(route, sub, deadline, what, undefined, now);
    } catch (error) {
      sink.reject(error);
      return;
    }
    if (ended === RESOLVED) sink.resolve(undefined);
    else
      ended.then(
        (value) => sink.resolve(value),
        (error: unknown) => sink.reject(error),
      );
  }

  /** The route the call goes on (cached, else read), then to its owner in this sender's order. */
  private route(sub: ObjectSubmission, deadline: number, what: CallName, now: number): Promise<unknown> {
    const { objectKind, id } = sub;
    const hit = this.config.cache.lookup(objectKind, id, now);
    if (hit !== undefined) {
      if (this.config.events.perMessage) this.routeEvent('hit', objectKind, id);
      if (this.routeChanges.idle) return this.toOwner(hit, sub, deadline, what, undefined, now);
      return this.inOrder(hit, sub, deadline, what);
    }
    if (this.config.events.perMessage) this.routeEvent('miss', objectKind, id);
    return this.resolve(sub, deadline, what).then((route) => {
      // With no cache, each call's read is the only sign of a new route: the last one is kept for the next.
      if (this.config.cache.maxAgeMs === 0) {
        const ordered = this.inOrder(route, sub, deadline, what);
        this.routeChanges.left(route);
        return ordered;
      }
      return this.inOrder(route, sub, deadline, what);
    });
  }

  /** Submits on `route` once the calls this sender sent to the object on its previous route were admitted. */
  private inOrder(
    route: ReadyRoute,
    sub: ObjectSubmission,
    deadline: number,
    what: CallName,
  ): Promise<unknown> {
    const wait = this.routeChanges.gate(sub.objectKind, sub.id, route);
    if (wait === undefined) return this.toOwner(route, sub, deadline, what);
    // The object may have moved again while this call waited: it takes the route current then (and
    // waits for that route's own flush), behind the calls that waited before it.
    return wait.then(() => {
      const now = this.config.clock.now();
      if (now >= deadline)
        throw new ZLinkError('Timeout', `${what}: the deadline passed while the object changed owner`);
      return this.route(sub, deadline, what, now);
    });
  }

  /**
   * A flush on `route` (see `RouteChanges`): a request that runs no handler, answered as the owner admits it.
   */
  private flush(route: ReadyRoute): Promise<unknown> {
    const flush = flushSubmission(route);
    const { link } = this.config;
    // A lost owner takes what was in flight to it along; nothing can arrive from there any more.
    if (!this.isSelf(route.owner) && !link.isReady(route.owner.rid, route.owner.nodeGeneration))
      return Promise.resolve();
    const now = this.config.clock.now();
    return this.toOwner(route, flush, now + FLUSH_WAIT_MS, new CallName(flush), this.flushMetrics, now);
  }

  /**
   * Direct resolution with the retry rules of issue 16 item 3; Missing goes to creation only under Instance
   * intent.
   */
  private async resolve(sub: ObjectSubmission, deadline: number, what: CallName): Promise<ReadyRoute> {
    const { objectKind, id } = sub;
    let created = false;
    let reread = false;
    // Reads that found no record to name a type: counted under the Instance intent's type only once
    // a creation proved it exists (a type named by a caller gets no counters of its own before that).
    let unnamed = 0;
    for (let attempt = 0; ; attempt++) {
      // A read that hangs (the store unreachable, its client queueing) must not hold the call past
      // its deadline: past it the read counts as failed, and goes on without the call.
      const result = await untilDeadline(
        this.config.resolver.resolve(objectKind, id),
        this.key(objectKind, id),
        deadline - this.config.clock.now(),
        this.config.storeHealth,
      );
      const type =
        result.tag === 'ReadyRoute'
          ? result.type
          : result.tag === 'Unavailable'
            ? result.authority.record.type
            : undefined;
      if (type !== undefined) {
        this.metricsOf(objectKind, type).storeReads += 1 + unnamed;
        unnamed = 0;
      } else if (sub.instance !== undefined) unnamed++;
      switch (result.tag) {
        case 'ReadyRoute':
          // A read that crossed its owner's leave notice may name the node the object just left: once more.
          if (reread || !this.config.cache.isLeaving(result.owner)) return result;
          reread = true;
          continue;
        case 'Missing':
          if (sub.instance === undefined || created)
            throw new ZLinkError(
              'NotFound',
              `${what}: no such ${objectKind} (it was never created, or it was destroyed)`,
            );
          created = true;
          await this.config.getOrCreate(
            objectKind,
            sub.instance.type,
            id,
            sub.instance.init,
            this.left(deadline, what),
          );
          this.metricsOf(objectKind, sub.instance.type).storeReads += unnamed;
          unnamed = 0;
          continue;
        case 'Unavailable':
          throw new ZLinkError(
            'Unavailable',
            `${what}: the ${objectKind} exists but cannot take messages now (${result.reason})`,
            {
              details: { reason: result.reason },
            },
          );
        case 'StoreFailure': {
          const left = deadline - this.config.clock.now();
          if (left <= 0)
            throw new ZLinkError(
              'Unavailable',
              `${what}: the Authority Store did not answer before the deadline`,
              {
                cause: result.error,
                details: { resolver: 'StoreFailure' },
              },
            );
          if (sub.signal?.aborted) throw cancelledError(String(what), sub.signal);
          await sleep(Math.min(STORE_RETRY_MS[Math.min(attempt, STORE_RETRY_MS.length - 1)] as number, left));
        }
      }
    }
  }

  private left(deadline: number, what: CallName): number {
    const left = deadline - this.config.clock.now();
    if (left <= 0) throw new ZLinkError('Timeout', `${what}: the deadline passed before the call was sent`);
    return left;
  }

  /**
   * Submits on `route`: the local host when this node owns it, else the owner peer, waiting for queue
   * space or the peer's link within the deadline. `counted`: the call's counters, when a wait for the
   * link brings it back here (it counts once).
   */
  private toOwner(
    route: ReadyRoute,
    sub: ObjectSubmission,
    deadline: number,
    what: CallName,
    counted?: ObjectTypeMetrics,
    // The caller's reading of the clock when it has just taken one (a cache hit): one read per call.
    now = this.config.clock.now(),
  ): Promise<unknown> {
    const m = counted ?? this.counted(sub, route.type);
    const { link } = this.config;
    const operationId = this.nextOperation();
    let raw: Promise<unknown>;
    if (this.isSelf(route.owner)) {
      const host = this.config.host;
      if (host === undefined) return this.stale(route, sub, what, 'this node holds no objects');
      raw = localCall(
        this.config,
        host,
        route,
        sub,
        operationIdString(operationId),
        Math.max(1, deadline - now),
        what,
        m,
      );
    } else {
      if (!link.isReady(route.owner.rid, route.owner.nodeGeneration))
        return this.whenReachable(route, sub, deadline, what, m);
      raw =
        sub.messageKind === 'send'
          ? remoteSend(this.config, route, sub, operationId, deadline, what)
          : new Promise((resolve, reject) =>
              remoteRequest(this.config, route, sub, operationId, deadline, now, what, m, {
                resolve,
                reject,
              }),
            );
    }
    if (sub.messageKind === 'request') return raw;
    // A request's terminal is counted by the pending table, a stale answer handled where it arrives
    // (`onStale`); a send that waited for queue space can still fail here.
    if (raw === RESOLVED) return raw;
    return raw.catch((error: unknown) => {
      this.failed(m, error);
      throw error;
    });
  }

  /** Whether `owner` is this node run (a local call). */
  private isSelf(owner: NodeRun): boolean {
    const { self } = this.config;
    return owner.rid === self.rid && owner.nodeGeneration === self.nodeGeneration;
  }

  /**
   * The next call's operation id: written into the record as prefix + counter, the string built only
   * for a local call. One object per caller, its counter set for each call: the encoder reads it at
   * once and keeps nothing.
   */
  private nextOperation(): OperationId {
    const operationId = this.operation;
    operationId.seq = this.operations++;
    return operationId;
  }

  /** The counters of `type`, with this call counted in them. */
  private counted(sub: ObjectSubmission, type: string): ObjectTypeMetrics {
    const m = this.metricsOf(sub.objectKind, type);
    if (sub.messageKind === 'send') m.calls.sends++;
    else m.calls.requests++;
    return m;
  }

  private failed(m: ObjectTypeMetrics, error: unknown): void {
    m.fail(error instanceof ZLinkError ? error.code : 'Error');
  }

  /**
   * The route's owner is not a ready peer (yet): wait for its link up to the deadline (capped), else
   * `Unavailable` and the entry goes. A call its signal withdrew, before or during the wait, ends
   * `Cancelled` and keeps the entry: a caller giving up says nothing about the route.
   */
  private async whenReachable(
    route: ReadyRoute,
    sub: ObjectSubmission,
    deadline: number,
    what: CallName,
    m: ObjectTypeMetrics,
  ): Promise<unknown> {
    const { signal } = sub;
    const wait = Math.min(deadline - this.config.clock.now(), CANDIDATE_WAIT_CAP_MS);
    const up = wait > 0 && !signal?.aborted && (await this.waits.until(route.owner, wait, signal));
    if (signal?.aborted) {
      m.fail('Cancelled');
      throw cancelledError(String(what), signal);
    }
    if (!up) return this.stale(route, sub, what, `its owner '${route.owner.rid}' is not reachable`);
    return this.toOwner(route, sub, deadline, what, m);
  }

  private stale(route: ReadyRoute, sub: ObjectSubmission, what: CallName, why: string): Promise<never> {
    this.config.cache.invalidateStale(sub.objectKind, sub.id, route);
    this.metricsOf(sub.objectKind, route.type).fail('Unavailable');
    return Promise.reject(
      new ZLinkError('Unavailable', `${what}: ${why}`, { details: { reason: 'ownerUnreachable' } }),
    );
  }

  private routeEvent(result: 'hit' | 'miss', objectKind: ObjectKind, id: string): void {
    this.config.events.emit({ type: 'object_route', result, mesh: this.config.mesh, objectKind, id });
  }

  metricsOf(kind: ObjectKind, type: string): ObjectTypeMetrics {
    const byType = this.metrics[kind];
    let m = byType.get(type);
    if (m === undefined) byType.set(type, (m = this.config.events.metrics.objects.of(kind, type)));
    return m;
  }

  /** The key of (`kind`, `id`) on this caller's mesh. */
  key(kind: ObjectKind, id: string): ObjectKey {
    return { mesh: this.config.mesh, kind, id };
  }
}
