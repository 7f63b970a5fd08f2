import { ZLinkError, errorMessage } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import type { TracePropagation } from '../../core/wire/index.js';
import type { ObjectActivationSnapshot, ObjectTypeMetrics, ZLinkEvents } from '../../core/observe/index.js';
import type { JobQueue } from '../../core/calls/index.js';
import type { AuthorityStore, NodeRun, ObjectKey, PeerAddress } from '../../core/ports/index.js';
import type {
  DeactivationReason,
  ObjectClassDescription,
  ObjectClassRegistry,
  ObjectInstances,
  ObjectRef,
} from '../../core/objects/index.js';
import type { OwnerLiveness } from '../resolve/index.js';
import { type Activation, type HeldAuthority, type ObjectPublisher, emitObjectEvent } from './activation.js';
import type { BindingPusher } from './activation-sessions.js';
import type { MemberSessions, RoomPusher } from './spot-sessions.js';
import { ActivationTable, type ActivationWatch } from './activation-table.js';
import { buildActivation } from './activation-build.js';
import { HostMoves } from './host-moves.js';
import { LeaseRecheck } from './lease-recheck.js';
import { AuthorityClaims, fencedRefusal } from './authority-claims.js';
import { Creations } from './creations.js';
import { type DurableClass, ObjectStates } from './object-states.js';
import { Passivation } from './passivation.js';
import { within } from './user-code.js';
import {
  type CallsElsewhere,
  type DispatchDeps,
  type InboundObjectCall,
  type ObjectAnswer,
  type RuntimeCallRunner,
  runObjectCall,
} from './object-dispatch.js';
import { refusal, staleRef, staleRoute, stateNotSavedRefusal } from './refusals.js';

export interface ObjectHostConfig extends OwnerLiveness {
  readonly mesh: string;
  readonly self: NodeRun;
  readonly store: AuthorityStore;
  readonly classes: ObjectClassRegistry;
  readonly instances: ObjectInstances;
  readonly jobs: JobQueue;
  readonly queueLimit: number;
  readonly events: ZLinkEvents;
  readonly tracing: TracePropagation | undefined;
  /**
   * Runs the runtime's own packets (a flush, a membership change): the membership side's `runRuntimeCall`.
   */
  readonly runtimeCall: RuntimeCallRunner;
  /** This node's own owner lease is fenced now. */
  readonly leaseFenced: () => boolean;
  /** The lease epoch new activations record as their OwnerLeaseGeneration. */
  readonly leaseGeneration: () => number;
  /** How long `close()` waits for running turns and hooks to end (the runtime's `drainTimeoutMs`). */
  readonly closeTimeoutMs: number;
  /** An activation ended here, after its `onDeactivate` (its Spot or members are told: `Memberships`). */
  readonly deactivated?: (a: Activation, reason: DeactivationReason) => void;
  /** How an Actor's `ctx.push` reaches a bound session's owner. */
  readonly sessionPush?: BindingPusher;
  /** How a Spot's `ctx.push` reaches its members' Session owners. */
  readonly roomPush?: RoomPusher;
  /** How `ctx.publish` reaches Logical Multicast. */
  readonly publish: ObjectPublisher;
  /** Told of every activation entering and leaving the table (the Spots' subscriptions). */
  readonly watch?: ActivationWatch;
  /**
   * A persistent class's State Store batcher and `persist` option (docs/objects.md#durable-objects);
   * absent, or `undefined` for a class, when it keeps no state.
   */
  readonly durableOf?: (cls: ObjectClassDescription) => DurableClass | undefined;
}

/**
 * The owner side of the object layer on one node (docs/architecture.md#the-object-layer): the activations it
 * holds, their creation and release through the Authority Store, and admission of the calls that reach them.
 * An activation is entered only through its turn queue; nothing here runs a handler twice or hands a call to
 * another owner.
 */
export class ObjectHost {
  private readonly active: ActivationTable;
  private readonly claims: AuthorityClaims;
  private readonly creations: Creations;
  /** Persistent classes' adopt, restore and last writes. */
  readonly states: ObjectStates;
  /** The steps of a move on this node, either end (lib/spot/relocation drives them). */
  readonly moves: HostMoves;
  private readonly metrics = new Map<string, ObjectTypeMetrics>();
  private readonly recheck: LeaseRecheck;
  /** Puts idle persistent objects to sleep (classes with `persist.idleMs`). */
  readonly passivation: Passivation;
  private closed = false;

  constructor(private readonly config: ObjectHostConfig) {
    this.active = new ActivationTable(config.watch);
    this.claims = new AuthorityClaims({
      store: config.store,
      self: config.self,
      leases: config.leases,
      clock: config.clock,
      link: config.link,
      fenced: () => this.fenced,
      // Its own creation is the only one in flight for a key (local creators share it).
      holds: (key) => this.active.has(key.kind, key.id) || this.moves.isArriving(key.kind, key.id),
    });
    this.states = new ObjectStates({
      self: config.self,
      clock: config.clock,
      durableOf: config.durableOf ?? (() => undefined),
      deposed: (a, why) => void this.deposed(a, why),
    });
    this.creations = new Creations({
      ...config,
      table: this.active,
      claims: this.claims,
      states: this.states,
      metricsOf: (cls) => this.metricsOf(cls),
      build: (key, cls, held, what) => this.build(key, cls, held, what),
      discard: (a, reason, detail) => this.discard(a, reason, detail),
    });
    this.moves = new HostMoves({
      states: this.states,
      mesh: config.mesh,
      table: this.active,
      classes: config.classes,
      dispatch: config,
      events: config.events,
      build: (key, cls, held, what) => this.build(key, cls, held, what),
      discard: (a, reason, detail) => this.discard(a, reason, detail),
    });
    this.recheck = new LeaseRecheck({
      store: config.store,
      self: config.self,
      table: this.active,
      closed: () => this.closed,
      counted: (a) => this.metricsOf(a.cls).storeReads++,
      discard: (a, reason, detail) => this.discard(a, reason, detail),
    });
    this.passivation = new Passivation({
      table: this.active,
      clock: config.clock,
      durableOf: config.durableOf ?? (() => undefined),
      blocked: () => this.fenced || this.moves.draining,
      passivate: (a) => this.passivate(a),
    });
    this.passivation.start(config.classes.all());
    for (const cls of config.classes.all()) {
      const m = config.events.metrics.objects.of(cls.kind, cls.type);
      m.queueDepth = () => this.active.depth(cls.kind, cls.type);
      this.metrics.set(`${cls.kind} ${cls.type}`, m);
    }
  }

  /** What running a call on an activation needs (for turns admitted elsewhere: multicast). */
  get dispatchDeps(): DispatchDeps {
    return this.config;
  }

  /**
   * No new object work while the lease is fenced or, after it came back, until ownership is re-checked
   * (docs/protocol.md#owner-lease-and-fencing).
   */
  get fenced(): boolean {
    return this.closed || this.config.leaseFenced() || this.recheck.pending;
  }

  /** A new activation held under `held`, not in the table yet (`buildActivation`, fenced with this host). */
  private build(
    key: ObjectKey,
    cls: ObjectClassDescription,
    held: HeldAuthority,
    what: string,
  ): Promise<Activation> {
    return buildActivation(
      { ...this.config, fenced: () => this.fenced, memberSessions: this.memberSessions },
      key,
      cls,
      held,
      this.metricsOf(cls),
      what,
      (a, e) => this.report(a, 'failed', `a timer callback threw: ${errorMessage(e)}`),
    );
  }

  /** A member Actor's bindings as its Spot here reads them: the incarnation that joined, not ending. */
  private readonly memberSessions: MemberSessions = (id, objectGeneration) => {
    const a = this.active.get('actor', id);
    return a === undefined || a.state === 'closing' || a.ref.objectGeneration !== objectGeneration
      ? undefined
      : a.sessions;
  };

  /** Whether this node hosts `type` of `kind` (has its class). */
  hosts(kind: ObjectKind, type: string): boolean {
    return this.config.classes.get(kind, type) !== undefined;
  }

  /** Every activation here now (a copy). */
  activations(): Activation[] {
    return this.active.all();
  }

  /** The activation of (`kind`, `id`) here, if any. */
  get(kind: ObjectKind, id: string): Activation | undefined {
    return this.active.get(kind, id);
  }

  /**
   * Creates (`mode: 'create'`) or gets-or-creates one object owned by this node and resolves with its
   * ref once it is Ready: the instance built, `onActivate(ctx)` run as its first turn, the record
   * committed Ready. Exactly one activation results however many nodes race (see `AuthorityClaims`);
   * get-or-create of a Ready object anywhere resolves with that object's ref. Ends `NotFound` when this
   * node has no class of `type`, `InvalidOperation` when `create` finds the id taken (or another type
   * holds it), `Rejected` while fenced, `Unavailable` at the deadline — an `onActivate` still running
   * then too (`details.reason: 'activationTimeout'`; the claim is undone once it returns) — or
   * `RemoteError` with what the class's construction or `onActivate` threw (`userCodeError`: as a
   * peer's answer carries it; the claim is undone first).
   */
  activate(...args: Parameters<Creations['activate']>): Promise<ObjectRef> {
    return this.creations.activate(...args);
  }

  /**
   * Destroys the local activation `ref` names: the record goes `releasing`, waiting turns end
   * `Unavailable`, the running one finishes, `onDeactivate(ctx, 'destroyed')` runs, then the record is
   * deleted — only then does the id resolve `Missing`. Ends `InvalidOperation` when `ref` is another
   * incarnation, `NotFound` when this node holds no activation of the id.
   */
  async destroy(ref: ObjectRef): Promise<ObjectRef> {
    const what = `destroy ${ref.kind} '${ref.id}'`;
    const a = this.active.get(ref.kind, ref.id);
    if (a === undefined || a.state !== 'ready')
      throw new ZLinkError('NotFound', `${what}: node '${this.config.self.rid}' holds no such object`);
    if (a.ref.objectGeneration !== ref.objectGeneration)
      throw staleRef(what, ref.objectGeneration, a.ref.objectGeneration);
    // A move has the object (its image may be running elsewhere by now): destroy it once it landed.
    if (a.ingress !== undefined)
      throw new ZLinkError('Unavailable', `${what}: the object is moving`, {
        details: { reason: 'relocating' },
      });
    await this.release(a, 'destroyed');
    return a.ref;
  }

  /**
   * Admits one call (from peer `from`, or a local caller) to an object of this node, or answers why not:
   * `ObjectRefused` while fenced, `ObjectStale` when the route is not the held one
   * (docs/protocol.md#resolving-a-global-id, step 5; ObjectGeneration is not compared,
   * docs/protocol.md#where-objectgeneration-counts) and `elsewhere` did not take it; else it becomes a turn.
   * Never throws.
   */
  dispatch(
    call: InboundObjectCall,
    answer: ObjectAnswer,
    elsewhere?: CallsElsewhere,
    from?: PeerAddress,
  ): void {
    if (this.fenced) return answer.error(refusal(fencedRefusal(`${call.objectKind} '${call.id}'`)));
    const a = this.active.get(call.objectKind, call.id);
    if (a === undefined || !a.admits(this.config.self, call.fences)) {
      if (elsewhere?.take(call, answer, from) === true) return;
      return answer.error(staleRoute(this.config.self.rid, call));
    }
    // A moving object's hold keeps what arrives after its seal, for the target or for an abort.
    if (a.ingress !== undefined) return a.ingress(call, answer);
    // Every-turn persistence: while its state is not in the store, the object takes no new work.
    const unsaved = a.durable?.unsaved;
    if (unsaved !== undefined) return answer.error(refusal(stateNotSavedRefusal(a, unsaved)));
    runObjectCall(a, call, answer, this.config);
  }

  /** The lease came back after a fence: see `LeaseRecheck.run`. */
  leaseRegained(): Promise<void> {
    return this.recheck.run();
  }

  /**
   * Stops: every activation is released (`shutdown`, waiting turns end `Shutdown`), its record deleted,
   * within `closeTimeoutMs`: one still running then keeps its record (it lapses with the lease), `failed`.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.passivation.stop();
    const released = Promise.all(this.active.all().map((a) => this.release(a, 'shutdown')));
    if (await within(released, this.config.closeTimeoutMs)) return;
    for (const a of this.active.all())
      this.report(a, 'failed', `still running at shutdown after ${this.config.closeTimeoutMs} ms`);
  }

  snapshot(): ObjectActivationSnapshot[] {
    return this.active.snapshot();
  }

  /**
   * Puts `a` to sleep: its state saved first (a save that fails leaves it running), then released as a
   * destroy is, `passivated`, without a tombstone; the next get-or-create restores it.
   */
  private async passivate(a: Activation): Promise<void> {
    if (a.state !== 'ready' || a.ingress !== undefined) return;
    await this.states.passivating(a);
    // A call that came while the last save was on its way wakes it: it runs, and the sweep waits again.
    if (a.turns.depth > 0 || a.state !== 'ready') return a.turns.unseal();
    await this.release(a, 'passivated');
    a.metrics.passivations++;
  }

  /**
   * `releasing` → deactivation → delete. A destroy whose store writes do not land ends `Unavailable`
   * rather than report a release that did not happen: before the first write the object stays as it
   * was; after it, the record stays `releasing` (this run reclaims it on its next creation, others once
   * its lease is gone). A shutdown goes on regardless: its records lapse with its lease.
   */
  private async release(a: Activation, reason: DeactivationReason): Promise<void> {
    if (a.state === 'closing') return;
    // A persistent object's state goes first: a destroy whose tombstone did not land changed nothing.
    if (reason === 'destroyed') await this.states.destroying(a);
    // Past a tombstone there is no way back: the release goes on whatever the Authority Store answers.
    const undoable = reason === 'passivated' || (reason === 'destroyed' && a.durable === undefined);
    a.state = 'closing';
    const releasing = await this.claims.releasing(a.key, a.cls.type, a.authority);
    const what = `${reason === 'passivated' ? 'passivate' : 'destroy'} ${a.key.kind} '${a.key.id}'`;
    if (releasing === 'failed' && undoable) {
      a.state = 'ready';
      a.turns.unseal();
      throw new ZLinkError('Unavailable', `${what}: the Authority Store did not answer; nothing changed`, {
        details: { resolver: 'StoreFailure' },
      });
    }
    await this.discard(a, reason);
    if (releasing === 'failed' && reason === 'destroyed')
      throw new ZLinkError('Unavailable', `${what}: deactivated, but its record could not be released yet`, {
        details: { reason: 'releaseIncomplete' },
      });
    if (typeof releasing !== 'number') return;
    const removed = await this.claims.remove(a.key, releasing);
    if (removed === 'failed' && reason === 'destroyed')
      throw new ZLinkError('Unavailable', `${what}: deactivated, but its record could not be removed yet`, {
        details: { reason: 'releaseIncomplete' },
      });
  }

  /** Ends an activation here without touching the store: its queue, its timers, `onDeactivate`. */
  private async discard(a: Activation, reason: DeactivationReason, detail?: string): Promise<void> {
    a.state = 'closing';
    await a.turns.close(reason, reason === 'shutdown' ? 'Shutdown' : 'Unavailable');
    const unsaved = await this.states.ended(a, reason);
    if (unsaved !== undefined) this.report(a, 'failed', unsaved);
    try {
      await a.hook('onDeactivate', a.scope, reason);
    } catch (error) {
      this.report(a, 'failed', `onDeactivate threw: ${errorMessage(error)}`);
    }
    this.active.delete(a);
    this.config.deactivated?.(a, reason);
    if (reason === 'failed') return;
    this.metricsOf(a.cls).deactivations++;
    this.emit(
      a.key,
      a.cls.type,
      'deactivated',
      a.authority.objectGeneration,
      detail ? `${reason}: ${detail}` : reason,
    );
  }

  /**
   * The State Store fenced `a`'s write: another owner adopted its state, so it took the object over
   * while this one's lease lapsed. It ends here, `takenOver`, leaving the store's records alone.
   */
  private async deposed(a: Activation, why: string): Promise<void> {
    if (a.state === 'closing' || this.active.get(a.key.kind, a.key.id) !== a) return;
    await this.discard(a, 'takenOver', `the State Store fenced its write: ${why}`);
  }

  private report(a: Activation | undefined, state: 'failed', reason: string): void {
    if (a) this.emit(a.key, a.cls.type, state, a.authority.objectGeneration, reason);
  }

  private emit(
    key: ObjectKey,
    type: string,
    state: 'activated' | 'deactivated' | 'failed',
    gen: number,
    reason?: string,
  ): void {
    emitObjectEvent(this.config.events, key, type, state, gen, reason);
  }

  private metricsOf(cls: ObjectClassDescription): ObjectTypeMetrics {
    return (
      this.metrics.get(`${cls.kind} ${cls.type}`) ?? this.config.events.metrics.objects.of(cls.kind, cls.type)
    );
  }
}
