import type { ObjectTypeMetrics } from '../../core/observe/index.js';
import type { JobQueue } from '../../core/calls/index.js';
import type { NodeRun, ObjectKey } from '../../core/ports/index.js';
import type {
  ObjectClassDescription,
  ObjectClassRegistry,
  ObjectInstances,
} from '../../core/objects/index.js';
import { ObjectTurns } from '../execution/index.js';
import { Activation, type HeldAuthority, type ObjectPublisher } from './activation.js';
import type { BindingPusher } from './activation-sessions.js';
import type { MemberSessions, RoomPusher } from './spot-sessions.js';
import { userCode } from './user-code.js';

/** What building an activation needs of its host. */
export interface ActivationDeps {
  readonly self: NodeRun;
  readonly classes: ObjectClassRegistry;
  readonly instances: ObjectInstances;
  readonly jobs: JobQueue;
  readonly queueLimit: number;
  /** The host's fence: its turns start nothing while it holds. */
  readonly fenced: () => boolean;
  /** How an Actor's `ctx.push` reaches a bound session's owner (absent: pushes go nowhere). */
  readonly sessionPush?: BindingPusher;
  /** How a Spot's `ctx.push` reaches its members' Session owners (absent: it reaches none). */
  readonly roomPush?: RoomPusher;
  /** A member Actor's bound sessions, when it runs on this node (read by its Spot's `ctx.push`). */
  readonly memberSessions: MemberSessions;
  /** How `ctx.publish` reaches Logical Multicast. */
  readonly publish: ObjectPublisher;
}

/**
 * A new activation of `cls` held under `held`, the one way an object comes to life on a node (created,
 * or restored by a move): its instance built through the class's DI (what that throws ends as
 * `userCodeError`), its turn queue on the runtime's job queue. Not in any table yet; nothing has run.
 */
export async function buildActivation(
  deps: ActivationDeps,
  key: ObjectKey,
  cls: ObjectClassDescription,
  held: HeldAuthority,
  metrics: ObjectTypeMetrics,
  what: string,
  onTimerError: (a: Activation, error: unknown) => void,
): Promise<Activation> {
  const instance = await userCode(what, () => deps.instances.create(cls));
  const turns = new ObjectTurns({
    key,
    jobs: deps.jobs,
    queueLimit: deps.queueLimit,
    fenced: deps.fenced,
    // Called only once a timer fired, long after `activation` below was made.
    onTimerError: (error) => onTimerError(activation, error),
  });
  const activation = new Activation(
    key,
    cls,
    instance,
    turns,
    held,
    deps.instances,
    deps.self,
    deps.classes,
    metrics,
    deps.sessionPush,
    deps.publish,
    { pusher: deps.roomPush, members: deps.memberSessions },
  );
  return activation;
}
