import { AsyncLocalStorage } from 'node:async_hooks';
import { ZLinkError } from '../../core/errors.js';
import type { ObjectKey } from '../../core/ports/index.js';

/**
 * Which object's turn the current code runs in, carried through every await and callback it starts
 * (`AsyncLocalStorage`). It is how a request from an object to itself is refused at once instead of
 * waiting for the very turn that waits for it (docs/architecture.md#execution: no reentrancy).
 */
export interface TurnContext {
  readonly key: ObjectKey;
  /** The queue the turn belongs to: the identity compared, so two activations of one key never match. */
  readonly owner: object;
  /**
   * The turn that is awaiting this one, when this turn was submitted as a request from inside another
   * object's turn: A → B → A is a deadlock as surely as A → A, while both wait.
   */
  readonly awaitedBy: TurnContext | undefined;
  /**
   * False once the turn has ended. A callback started inside a turn (a plain `setTimeout`, a promise
   * left running) keeps the context after the turn is over; such code waits for nothing, so it is no
   * longer a reentrant call.
   */
  active: boolean;
}

const storage = new AsyncLocalStorage<TurnContext>();

/** The turn the calling code runs in, `undefined` outside any object turn (or after it ended). */
export function currentTurn(): TurnContext | undefined {
  const context = storage.getStore();
  return context?.active ? context : undefined;
}

const runJob = <T>(job: { run(): T }): T => job.run();

/** Runs `job` as the turn described by `context` (the job itself, not a closure made to run it). */
export function runInTurn<T>(context: TurnContext, job: { run(): T }): T {
  return storage.run(context, runJob, job);
}

/** Runs `body` outside any turn: a timer firing belongs to no caller, whatever turn armed it. */
export function runOutsideTurns<T>(body: () => T): T {
  return storage.exit(body);
}

const sameKey = (a: ObjectKey, b: ObjectKey): boolean =>
  a.mesh === b.mesh && a.kind === b.kind && a.id === b.id;

/** The active turn on the chain from `from` that `matches`, or `undefined`. */
function waitingTurn(
  from: TurnContext | undefined,
  matches: (c: TurnContext) => boolean,
): TurnContext | undefined {
  for (let c = from; c !== undefined; c = c.awaitedBy) if (c.active && matches(c)) return c;
  return undefined;
}

/** `mesh/kind/id` for messages. */
export function describeObject(key: ObjectKey): string {
  return `${key.kind} '${key.id}' on mesh '${key.mesh}'`;
}

function selfRequest(what: string, key: ObjectKey): ZLinkError {
  return new ZLinkError(
    'InvalidOperation',
    `${what}: a request from ${describeObject(key)} to itself would wait for its own turn`,
    { details: { reason: 'selfRequest', kind: key.kind, id: key.id } },
  );
}

/**
 * For the call path, before anything is resolved or sent: the `InvalidOperation` to end a request to
 * `target` with when the calling code runs in a turn of that object (or in a turn it awaits), else
 * `undefined`. Only in-process waits are seen: a cycle through another process is not.
 */
export function selfRequestRefusal(what: string, target: ObjectKey): ZLinkError | undefined {
  const turn = currentTurn();
  // Outside any turn (a caller that is not an object): nothing to walk.
  if (turn === undefined) return undefined;
  const waiting = waitingTurn(turn, (c) => sameKey(c.key, target));
  return waiting ? selfRequest(what, target) : undefined;
}

/** The same check by queue identity, for a submission that reached the object's own queue. */
export function selfSubmitRefusal(what: string, key: ObjectKey, owner: object): ZLinkError | undefined {
  const waiting = waitingTurn(currentTurn(), (c) => c.owner === owner);
  return waiting ? selfRequest(what, key) : undefined;
}
