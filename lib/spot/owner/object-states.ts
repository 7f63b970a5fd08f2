import { ZLinkError, errorMessage } from '../../core/errors.js';
import type { NodeRun, ObjectKey } from '../../core/ports/index.js';
import type {
  DeactivationReason,
  NormalizedPersistOptions,
  ObjectClassDescription,
} from '../../core/objects/index.js';
import {
  type AdoptedState,
  DurableState,
  type DurableHandover,
  type StateBatcher,
  adoptState,
} from '../durable/index.js';
import type { Clock } from '../resolve/index.js';
import type { DurableTimer } from '../execution/index.js';
import type { Activation } from './activation.js';
import { userCode } from './user-code.js';
import { rearmTimers } from './timer-rearm.js';

/** A persistent class as its owner writes it: its store's batcher, its `persist` option. */
export interface DurableClass {
  readonly batcher: StateBatcher;
  readonly persist: NormalizedPersistOptions;
}

/** What the owner's durable state works with. */
export interface ObjectStatesDeps {
  readonly self: NodeRun;
  readonly clock: Clock;
  /** A persistent class's State Store batcher and `persist` option, `undefined` for one that is not. */
  readonly durableOf: (cls: ObjectClassDescription) => DurableClass | undefined;
  /** The store fenced activation `a` (another owner adopted its state): it must end, `takenOver`. */
  readonly deposed: (a: Activation, why: string) => void;
}

/**
 * The owner's side of durable state (docs/objects.md#durable-objects): the adopt that starts every
 * activation of a persistent class, the durable state it then writes through, and what its end
 * writes — the state on a stop, a tombstone on a destroy, nothing when another owner took it.
 */
export class ObjectStates {
  constructor(private readonly deps: ObjectStatesDeps) {}

  /** Whether `cls` keeps its state in a State Store. */
  persistent(cls: ObjectClassDescription): boolean {
    return this.deps.durableOf(cls) !== undefined;
  }

  /**
   * The adopt of a new incarnation (see `adoptState`): `undefined` for a class that is not persistent.
   */
  adopt(
    key: ObjectKey,
    cls: ObjectClassDescription,
    objectGeneration: number,
    deadline: number,
    what: string,
  ): Promise<AdoptedState | undefined> {
    const durable = this.deps.durableOf(cls);
    if (durable === undefined) return Promise.resolve(undefined);
    const claim = { key, type: cls.type, objectGeneration, owner: this.deps.self, persist: durable.persist };
    return adoptState(durable.batcher, claim, deadline, () => this.deps.clock.now(), what);
  }

  /**
   * Makes `a` write its state from `from` (an adopt's answer, or the epoch and version a move handed
   * over) on; `bytes`: what the store holds now, so an unchanged first capture writes nothing.
   */
  attach(
    a: Activation,
    from: DurableHandover,
    stored: { readonly state: Uint8Array | undefined; readonly timers: Uint8Array | undefined },
  ): void {
    const durable = this.deps.durableOf(a.cls);
    if (durable === undefined) return;
    const deps = {
      key: a.key,
      type: a.cls.type,
      persist: durable.persist,
      rid: this.deps.self.rid,
      authority: () => a.authority,
      timers: () => (a.turns.timers.anyDurable ? a.turns.timers.durableTimers() : NO_TIMERS),
      metrics: a.metrics,
      deposed: (why: string) => this.deps.deposed(a, why),
    };
    a.persistWith(new DurableState(deps, durable.batcher, from.epoch, from.version, stored));
  }

  /**
   * The restore and `onActivate` of a new incarnation, as its first turn: `restore(state, ctx)` when
   * there was state, then `onActivate` told so; then, in mode `everyTurn`, the state that turn left is
   * in the store before the creation is answered.
   */
  async activate(
    a: Activation,
    adopted: AdoptedState | undefined,
    init: unknown,
    what: string,
  ): Promise<void> {
    await a.turns.submit(() =>
      userCode(what, async () => {
        if (adopted?.restored !== undefined) {
          a.metrics.restores++;
          await a.hook('restore', adopted.state, a.scope);
          armDurableTimers(a, adopted.timers);
        }
        return a.hook('onActivate', { ...a.scope, init, restored: adopted?.restored });
      }),
    );
    const d = a.durable;
    if (d?.mode === 'everyTurn') await d.flushed();
  }

  /**
   * Before a destroy lets its record go: the running turn ends, the writes on their way land, then the
   * tombstone (docs/decisions.md#durable-state). Rejects `Unavailable` when the store did not take it:
   * the object then runs on, unchanged.
   */
  async destroying(a: Activation): Promise<void> {
    const d = a.durable;
    if (d === undefined) return;
    await a.turns.seal();
    try {
      await d.tombstone();
    } catch (error) {
      a.turns.unseal();
      throw error;
    }
  }

  /**
   * Before a passivation lets its record go: the running turn ends and the state it leaves is in the
   * store (an explicit object's captured once more). Rejects when the store did not take it: the object
   * then runs on, as if nothing happened.
   */
  async passivating(a: Activation): Promise<void> {
    const d = a.durable;
    if (d === undefined) return;
    await a.turns.seal();
    try {
      if (d.mode === 'explicit')
        d.capture(await userCode(`${a.key.kind} '${a.key.id}': capture()`, () => a.hook('capture')));
      await d.flushed();
    } catch (error) {
      a.turns.unseal();
      throw error;
    }
  }

  /**
   * What an activation's end writes, once its turns are closed: on a stop the state it ends with
   * (`capture()` once more, then every write landed); nothing else writes (a destroy wrote its tombstone
   * already; a takeover, a move or a failed creation must not). Resolves with what went wrong, if
   * anything: the end goes on regardless.
   */
  async ended(a: Activation, reason: DeactivationReason): Promise<string | undefined> {
    const d = a.durable;
    if (d === undefined) return undefined;
    if (reason !== 'shutdown' && reason !== 'passivated') {
      d.stop(reason);
      return undefined;
    }
    try {
      const state = await userCode(`${a.key.kind} '${a.key.id}': capture()`, () => a.hook('capture'));
      d.capture(state);
      await d.flushed();
      return undefined;
    } catch (error) {
      return `its last state was not saved: ${errorMessage(error)}`;
    } finally {
      d.stop(reason);
    }
  }
}

const NO_TIMERS: readonly DurableTimer[] = [];

/**
 * Arms the durable timers `a` was saved with, by the wall clock: a timeout that came due meanwhile fires
 * at once, an interval on its beat (its next firing after now), each keeping its anchor.
 */
function armDurableTimers(a: Activation, timers: readonly DurableTimer[]): void {
  const now = Date.now();
  rearmTimers(
    a,
    timers.map((t) => {
      let next = t.anchorAt;
      if (t.kind === 'interval' && next < now) {
        const every = t.intervalMs as number;
        next += Math.ceil((now - next) / every) * every;
      }
      const dueMs = Math.max(0, next - now);
      return {
        kind: t.kind,
        label: t.label,
        intervalMs: t.intervalMs,
        dueMs,
        durable: { anchorAt: t.anchorAt },
      };
    }),
  );
}

/** `create` of an id whose state is saved: the object exists, asleep or orphaned; get-or-create wakes it. */
export function savedExists(what: string, restoredVersion: number): ZLinkError {
  return new ZLinkError(
    'InvalidOperation',
    `${what}: the id has saved state (version ${restoredVersion}); get-or-create brings it back`,
    { details: { reason: 'saved', version: restoredVersion } },
  );
}
