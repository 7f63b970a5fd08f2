import { ZLinkError, errorMessage } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import type { ObjectTypeMetrics, ZLinkEvents } from '../../core/observe/index.js';
import type { NodeRun, ObjectKey } from '../../core/ports/index.js';
import type {
  DeactivationReason,
  ObjectClassDescription,
  ObjectClassRegistry,
  ObjectRef,
} from '../../core/objects/index.js';
import type { Clock } from '../resolve/index.js';
import { type Activation, type HeldAuthority, emitObjectEvent, objectRef } from './activation.js';
import type { ActivationTable } from './activation-table.js';
import type { AuthorityClaims } from './authority-claims.js';
import { creationLost, exists } from './refusals.js';
import { type ObjectStates, savedExists } from './object-states.js';
import { within } from './user-code.js';

/** What creating an object here works with: the host's table, claims and counters, and its hands. */
export interface CreationsDeps {
  readonly mesh: string;
  readonly self: NodeRun;
  readonly clock: Clock;
  readonly classes: ObjectClassRegistry;
  readonly events: ZLinkEvents;
  /** The lease epoch new activations record as their OwnerLeaseGeneration. */
  readonly leaseGeneration: () => number;
  readonly table: ActivationTable;
  readonly claims: AuthorityClaims;
  /** A persistent class's adopt and restore. */
  readonly states: ObjectStates;
  metricsOf(cls: ObjectClassDescription): ObjectTypeMetrics;
  /** A new activation held under `held`, not in the table yet. */
  build(key: ObjectKey, cls: ObjectClassDescription, held: HeldAuthority, what: string): Promise<Activation>;
  /** Ends an activation here without touching the store. */
  discard(a: Activation, reason: DeactivationReason, detail?: string): Promise<void>;
}

/**
 * How an object comes to life on this node: its claim in the Authority Store, the instance built,
 * `onActivate` as its first turn, the record committed Ready — or all of it undone. Two local
 * creators of one id share one creation.
 */
export class Creations {
  /** Creations in flight here, so two local creators of one id share one claim. */
  private readonly inFlight: Record<ObjectKind, Map<string, Promise<ObjectRef>>> = {
    spot: new Map(),
    actor: new Map(),
  };

  constructor(private readonly deps: CreationsDeps) {}

  /** See `ObjectHost.activate`, whose contract this keeps. */
  activate(
    kind: ObjectKind,
    type: string,
    id: string,
    mode: 'create' | 'getOrCreate',
    init: unknown,
    timeoutMs: number,
  ): Promise<ObjectRef> {
    const { deps } = this;
    const what = `${mode} ${kind} '${id}'`;
    const cls = deps.classes.get(kind, type);
    if (cls === undefined)
      return Promise.reject(
        new ZLinkError('NotFound', `${what}: node '${deps.self.rid}' hosts no ${kind} type '${type}'`),
      );
    const here = deps.table.get(kind, id);
    if (here?.state === 'ready') {
      if (here.cls.type !== type || mode === 'create') return Promise.reject(exists(what, here.ref));
      return Promise.resolve(here.ref);
    }
    const flight = this.inFlight[kind].get(id);
    if (flight !== undefined)
      return mode === 'create' ? flight.then((ref) => Promise.reject(exists(what, ref))) : flight;
    const key: ObjectKey = { mesh: deps.mesh, kind, id };
    const started = this.create(key, cls, mode, init, deps.clock.now() + timeoutMs, what).finally(() => {
      if (this.inFlight[kind].get(id) === started) this.inFlight[kind].delete(id);
    });
    this.inFlight[kind].set(id, started);
    return started;
  }

  private async create(
    key: ObjectKey,
    cls: ObjectClassDescription,
    mode: 'create' | 'getOrCreate',
    init: unknown,
    deadline: number,
    what: string,
  ): Promise<ObjectRef> {
    const { deps } = this;
    const metrics = deps.metricsOf(cls);
    const claim = await deps.claims.claim(key, cls.type, deadline, metrics, what);
    if (claim.tag === 'ready') {
      const { record } = claim.stored;
      const ref = objectRef(key, record.type, record.objectGeneration, record.owner.rid);
      if (mode === 'create') throw exists(what, ref);
      return ref;
    }
    const held = {
      objectGeneration: claim.version,
      authorityOwnerGeneration: 1,
      ownerLeaseGeneration: deps.leaseGeneration(),
      storeVersion: claim.version,
    };
    let activation: Activation | undefined;
    let late = false;
    try {
      // A persistent class's state comes back first, and every earlier owner's writes are fenced.
      const adopted = await deps.states.adopt(key, cls, held.objectGeneration, deadline, what);
      if (mode === 'create' && adopted?.restored !== undefined)
        throw savedExists(what, adopted.restored.version);
      activation = await deps.build(key, cls, held, what);
      if (adopted !== undefined) deps.states.attach(activation, adopted, adopted.stored);
      deps.table.set(activation);
      const activated = deps.states.activate(activation, adopted, init, what);
      if (!(await within(activated, deadline - deps.clock.now()))) {
        late = true;
        throw new ZLinkError('Unavailable', `${what}: onActivate did not end by the deadline`, {
          details: { reason: 'activationTimeout' },
        });
      }
      const committed = await deps.claims.commit(key, cls.type, claim.version, held, what);
      if (committed === undefined) throw creationLost(what);
      const a = activation;
      a.authority = { ...held, storeVersion: committed };
      a.state = 'ready';
    } catch (error) {
      const undo = async (): Promise<void> => {
        if (activation) await deps.discard(activation, 'failed', errorMessage(error));
        await deps.claims.remove(key, claim.version);
        emitObjectEvent(deps.events, key, cls.type, 'failed', held.objectGeneration, errorMessage(error));
      };
      // A late onActivate is waited for (discard ends once it has returned), not its creator.
      if (late) void undo();
      else await undo();
      throw error;
    }
    metrics.activations++;
    const reason = claim.tookOver ? 'tookOver' : undefined;
    emitObjectEvent(deps.events, key, cls.type, 'activated', held.objectGeneration, reason);
    return activation.ref;
  }
}
