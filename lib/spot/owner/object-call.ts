import type { WireError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import type { TraceFields } from '../../core/wire/index.js';
import type { MessageKind } from '../../core/calls/index.js';
import type { NodeRun, PeerAddress } from '../../core/ports/index.js';
import type { ZLinkMulticastEvent } from '../../core/objects/index.js';
import type { ObjectRouteFences, SessionStamp } from '../wire/index.js';

/** One send or request as its owner admits it, from the wire or from a caller in this process. */
export interface InboundObjectCall {
  readonly messageKind: MessageKind;
  readonly objectKind: ObjectKind;
  readonly id: string;
  readonly fences: ObjectRouteFences;
  readonly operationId: string;
  readonly packet: string;
  readonly metadata: Uint8Array | undefined;
  readonly payload: Uint8Array;
  readonly trace: TraceFields | undefined;
  /** Request correlation (the origin's); `undefined` for a send. */
  readonly correlation: number | undefined;
  /**
   * With `correlation`, a request's reply route: the node run its answer goes to, wherever the call is
   * handled (a turn that moves with its object is answered by the new owner on it); `undefined` for a send.
   */
  readonly origin: NodeRun | undefined;
  /** The NodeRid the call came from. */
  readonly sourceRid: string;
  /** Message Follow relays it took to get here (0: straight from its sender). */
  readonly hops: number;
  /** Set when a Session owner relayed it from an end-user session over its binding route. */
  readonly session?: SessionStamp;
  /** Set on a Logical Multicast event for a subscribed Spot: it runs that subscription's handler. */
  readonly event?: SpotEventStamp;
  /**
   * The record this call arrived as (a view of the received bytes), when the call is that record
   * unchanged: a move carries it as is instead of writing it again. Absent for a call made in this process.
   */
  readonly wire?: Uint8Array;
}

/** A Logical Multicast event as its Spots take it: one stamp shared by every Spot of one record. */
export interface SpotEventStamp {
  /** What the handler sees as `ctx.multicast` (frozen, shared). */
  readonly info: ZLinkMulticastEvent;
  /** The publishing node's run and its number for the event (its order among that run's events). */
  readonly publisherGeneration: string;
  readonly seq: number;
}

/**
 * How a call's single terminal leaves its owner: the handler's result (encoded by the answer), or a
 * wire error. A send's answer reports instead of replying; a stale send also tells its sender.
 */
export interface ObjectAnswer {
  ok(result: unknown): void;
  error(error: WireError): void;
  /** The call's turn starts: from here on a failure is the handler's, not a refusal. */
  accepted?(): void;
  /** An event this incarnation had run already (a move brought it twice): its turn ran no handler. */
  skipped?(): void;
}

/**
 * Where a call goes that its owner refused for a route it no longer holds: an object arriving here, or
 * Message Follow after one that left. `true` when it took the call (answered or sent on), `false` when
 * the owner's stale-route answer applies. `from`: the peer that sent the call, absent for a local caller's.
 */
export interface CallsElsewhere {
  take(call: InboundObjectCall, answer: ObjectAnswer, from?: PeerAddress): boolean;
}
