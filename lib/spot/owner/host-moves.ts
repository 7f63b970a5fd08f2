import { ZLinkError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import { decodePayload } from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { ObjectKey, StoreVersion } from '../../core/ports/index.js';
import type {
  DeactivationReason,
  ObjectClassDescription,
  ObjectClassRegistry,
  RegisteredObjectClass,
} from '../../core/objects/index.js';
import { type RelocationImage, type TimerImage } from '../wire/index.js';
import { type Activation, type HeldAuthority, emitObjectEvent } from './activation.js';
import type { ActivationTable } from './activation-table.js';
import { userCode } from './user-code.js';
import type { ObjectStates } from './object-states.js';
import { rearmTimers } from './timer-rearm.js';
import type { InboundObjectCall, ObjectAnswer } from './object-call.js';
import { type DispatchDeps, runObjectCall } from './object-dispatch.js';

/** What a move does through the host: its table, how it builds and ends activations. */
export interface HostMovesDeps {
  readonly mesh: string;
  readonly table: ActivationTable;
  readonly classes: ObjectClassRegistry;
  /** How a carried call runs once the object is here. */
  readonly dispatch: DispatchDeps;
  build(key: ObjectKey, cls: ObjectClassDescription, held: HeldAuthority, what: string): Promise<Activation>;
  discard(a: Activation, reason: DeactivationReason, detail?: string): Promise<void>;
  readonly events: ZLinkEvents;
  /** A persistent class's durable state, which a move hands over. */
  readonly states: ObjectStates;
}

/**
 * The owner-side steps of a move (docs/protocol.md#relocation-steps), on both ends: the target restores the
 * object off the table (nothing reaches it), adopts it at cutover and runs the calls the move carried;
 * the source lets it go once the move committed. Each step touches only the activation it is given.
 */
export class HostMoves {
  /** Set by a drain: no object moves here any more. */
  draining = false;
  /**
   * Objects restoring here, not in the table yet, whose record may name this run any moment (the
   * target's CAS): a creation here must not take such a record for a leftover and claim it.
   */
  private readonly arriving = new Set<string>();

  /** Marks (`here`) or unmarks an object arriving by a move (see `arriving`). */
  arrival(kind: ObjectKind, id: string, here: boolean): void {
    if (here) this.arriving.add(`${kind}\u0000${id}`);
    else this.arriving.delete(`${kind}\u0000${id}`);
  }

  /** Whether any object is arriving here by a move (a call costs this check only while none is). */
  get anyArriving(): boolean {
    return this.arriving.size > 0;
  }

  /** Whether an object is arriving here by a move. */
  isArriving(kind: ObjectKind, id: string): boolean {
    return this.arriving.size > 0 && this.arriving.has(`${kind}\u0000${id}`);
  }

  constructor(private readonly deps: HostMovesDeps) {}

  /** The objects here that a move could take now: Ready, of a relocatable class, not moving. */
  movable(): Activation[] {
    return this.deps.table
      .all()
      .filter(
        (a) =>
          a.state === 'ready' &&
          a.ingress === undefined &&
          this.deps.classes.get(a.key.kind, a.cls.type)?.options.relocatable === true,
      );
  }

  /**
   * The class of `type` here when its objects may move (`relocatable: true`), else why not:
   * `NotFound` when this node hosts no such class, `InvalidOperation` when it is not relocatable.
   */
  relocatableClass(kind: ObjectKind, type: string, what: string): RegisteredObjectClass | ZLinkError {
    const cls = this.deps.classes.get(kind, type);
    if (cls === undefined)
      return new ZLinkError('NotFound', `${what}: this node hosts no ${kind} type '${type}'`);
    if (!cls.options.relocatable)
      return new ZLinkError('InvalidOperation', `${what}: ${kind} type '${type}' is not relocatable`, {
        details: { reason: 'notRelocatable' },
      });
    return cls;
  }

  /**
   * The target's restore: the instance built (DI), its turns sealed so that no turn and no timer runs
   * before cutover, then `restore(state, ctx)` with the state the source captured. Not in the table:
   * no call reaches it until `adopt`. What user code throws ends as `userCodeError`; the activation is
   * then closed again, nothing kept.
   */
  async restore(image: RelocationImage, held: HeldAuthority, what: string): Promise<Activation> {
    const cls = this.relocatableClass(image.objectKind, image.type, what);
    if (cls instanceof ZLinkError) throw cls;
    if (this.draining)
      throw new ZLinkError('Unavailable', `${what}: this node is draining`, {
        details: { reason: 'draining' },
      });
    const key = { mesh: this.deps.mesh, kind: image.objectKind, id: image.id };
    // A persistent object writes on from where its source left the store; one that comes without that
    // place (its source's class keeps no state) would never be saved here: refused, it stays there.
    if (this.deps.states.persistent(cls) && image.durable === undefined)
      throw new ZLinkError(
        'Unavailable',
        `${what}: the source sent no State Store place; it keeps the object`,
        {
          details: { reason: 'notPersistentAtSource' },
        },
      );
    const a = await this.deps.build(key, cls, held, what);
    if (image.durable !== undefined)
      this.deps.states.attach(a, image.durable, { state: image.state, timers: undefined });
    a.membership.restore(image.membership);
    a.sessions?.restore(image.sessions);
    a.eventOrder?.restore(image.events);
    void a.turns.seal();
    try {
      let state: unknown;
      if (image.state !== undefined) {
        const decoded = decodePayload(image.state);
        if (!decoded.ok) throw new ZLinkError('ProtocolError', `${what}: the moved state: ${decoded.reason}`);
        state = decoded.value;
      }
      await userCode(`${what}: restore()`, () => a.hook('restore', state, a.scope));
    } catch (error) {
      await a.turns.close('relocationAborted');
      throw error;
    }
    return a;
  }

  /**
   * Cutover on the target: the authority CAS landed at `storeVersion`, so the activation takes its place
   * in the table, Ready, and its turns open; the moved timers are set again (see `restoreTimers`).
   * Run the carried calls with `run` right after, in order.
   */
  adopt(a: Activation, storeVersion: StoreVersion, timers: readonly TimerImage[], elapsedMs: number): void {
    a.authority = { ...a.authority, storeVersion };
    a.state = 'ready';
    this.deps.table.set(a);
    a.turns.unseal();
    restoreTimers(a, timers, elapsedMs);
    a.metrics.activations++;
    emitObjectEvent(
      this.deps.events,
      a.key,
      a.cls.type,
      'activated',
      a.authority.objectGeneration,
      'relocated',
    );
  }

  /**
   * Runs a call the move carried (admitted on the old route, held or relayed) as a turn of `a`, past its
   * queue limit; to the object's hold instead when it is moving again.
   */
  run(a: Activation, call: InboundObjectCall, answer: ObjectAnswer): void {
    if (a.ingress !== undefined) return a.ingress(call, answer);
    runObjectCall(a, call, answer, this.deps.dispatch, true);
  }

  /**
   * The source, once the move committed: its waiting turns go with the object (the new owner answers
   * them; no reply leaves here), then `onDeactivate(ctx, 'relocated')` and it leaves the table. An
   * activation already closing (released meanwhile) is left to that.
   */
  relinquish(a: Activation): Promise<void> {
    a.turns.handOff();
    if (a.state === 'closing') return Promise.resolve();
    return this.deps.discard(a, 'relocated');
  }

  /**
   * An activation that will not run here: a restored one never adopted (the move ended before
   * cutover; it never activated here, so no `onDeactivate`), or a source whose record changed during a
   * move. Its turns close; it leaves the table if it was there.
   */
  async drop(a: Activation, detail: string): Promise<void> {
    a.state = 'closing';
    await a.turns.close(detail);
    this.deps.table.delete(a);
  }
}

/**
 * Timers as they moved: one whose label names a method of the object is set again to call it, due
 * when it would have been due on the source (`elapsedMs` since the image arrived taken off: the
 * transfer itself is not counted); one without such a label stays behind (a callback cannot travel),
 * and `restore()` may set it again itself.
 */
function restoreTimers(a: Activation, timers: readonly TimerImage[], elapsedMs: number): void {
  rearmTimers(
    a,
    timers.map((t) => {
      const dueMs = Math.max(0, t.dueInMs - elapsedMs);
      // A durable one stays durable where the object writes on (its wall-clock beat from its next firing).
      const durable = t.durable && a.durable !== undefined ? { anchorAt: Date.now() + dueMs } : undefined;
      return { kind: t.kind, label: t.label, intervalMs: t.intervalMs, dueMs, durable };
    }),
  );
}
