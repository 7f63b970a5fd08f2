import type { ObjectKind } from '../../core/kinds.js';
import { encodePayload } from '../../core/wire/index.js';
import { OBJECT_FLUSH_PACKET } from '../../core/objects/index.js';
import type { ReadyRoute } from '../resolve/index.js';
import type { ObjectSubmission } from './object-submission.js';
import { DEPARTED_MAX_AGE_MS, FLUSH_WAIT_MS } from '../timing/index.js';

/** The most routes remembered for objects whose route went away and that were not called since. */
const MAX_DEPARTED = 10000;

const FLUSH_PAYLOAD = encodePayload(null);

/**
 * A flush on `route` as a call submits it: a request with the reserved packet, bounded by `FLUSH_WAIT_MS`.
 */
export function flushSubmission(route: ReadyRoute): ObjectSubmission {
  return {
    messageKind: 'request',
    objectKind: route.key.kind,
    id: route.key.id,
    packet: OBJECT_FLUSH_PACKET,
    metadata: undefined,
    payload: FLUSH_PAYLOAD,
    trace: undefined,
    timeoutMs: FLUSH_WAIT_MS,
    signal: undefined,
  };
}

const keyOf = (kind: ObjectKind, id: string): string => `${kind}\u0000${id}`;

const sameRoute = (a: ReadyRoute, b: ReadyRoute): boolean =>
  a.owner.rid === b.owner.rid &&
  a.owner.nodeGeneration === b.owner.nodeGeneration &&
  a.authorityOwnerGeneration === b.authorityOwnerGeneration &&
  a.ownerLeaseGeneration === b.ownerLeaseGeneration;

/**
 * One sender's order across a change of route (issue 17: per-sender order holds across a move). Calls
 * sent on an object's old route may still be travelling — relayed by Message Follow, held by a moving
 * owner — when the sender learns the new route; a call sent there directly could overtake them. So
 * the first call on a new route waits for a flush sent on the old one: it follows the same hops in
 * order, and its answer says that everything sent before it has been admitted by the owner. The
 * calls to that object meanwhile wait behind it, in order; other objects are not held.
 *
 * A call whose object has no departed route costs one size check here.
 */
export class RouteChanges {
  /** In departure order (a route that leaves again moves to the end), so the oldest is first. */
  private readonly departed = new Map<string, { readonly route: ReadyRoute; readonly at: number }>();
  private readonly flushing = new Map<string, Promise<void>>();

  /** `flush(route)`: a flush on `route`, settled by its answer (any answer) or `FLUSH_WAIT_MS`. */
  constructor(private readonly flush: (route: ReadyRoute) => Promise<unknown>) {}

  /** Whether any object's order needs looking at: otherwise `gate` need not be called. */
  get idle(): boolean {
    return this.departed.size === 0 && this.flushing.size === 0;
  }

  /** The route calls to its object were sent on went away (the cache dropped it, or a read replaced it). */
  left(route: ReadyRoute): void {
    const key = keyOf(route.key.kind, route.key.id);
    this.departed.delete(key);
    this.departed.set(key, { route, at: Date.now() });
    if (this.departed.size > MAX_DEPARTED) {
      const oldest = this.departed.keys().next().value as string;
      this.departed.delete(oldest);
    }
  }

  /**
   * Forgets routes that left longer ago than anything sent on them could still be travelling (a
   * relay's route lives `DEPARTED_MAX_AGE_MS` at most), so objects never called again stop costing
   * every call a lookup here.
   */
  private expire(): void {
    const before = Date.now() - DEPARTED_MAX_AGE_MS;
    for (const [key, d] of this.departed) {
      if (d.at > before) return;
      this.departed.delete(key);
    }
  }

  /**
   * What a call to (`kind`, `id`) on `route` must wait for before it is sent: a flush in flight for
   * the object, or one started now because `route` is not the route its last calls went on;
   * `undefined` when it may go at once.
   */
  gate(kind: ObjectKind, id: string, route: ReadyRoute): Promise<void> | undefined {
    const key = keyOf(kind, id);
    const inFlight = this.flushing.get(key);
    if (inFlight !== undefined) return inFlight;
    this.expire();
    const previous = this.departed.get(key)?.route;
    if (previous === undefined) return undefined;
    this.departed.delete(key);
    if (sameRoute(previous, route)) return undefined;
    const done = bounded(this.flush(previous)).then(() => {
      if (this.flushing.get(key) === done) this.flushing.delete(key);
    });
    this.flushing.set(key, done);
    return done;
  }
}

/** Settles when `p` does, or after `FLUSH_WAIT_MS`; never rejects. */
function bounded(p: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, FLUSH_WAIT_MS);
    const end = (): void => {
      clearTimeout(timer);
      resolve();
    };
    p.then(end, end);
  });
}
