import type { DeliveryResult } from '../../core/observe/index.js';
import type { CallSink, HandlerFn, MessageKind } from '../../core/calls/index.js';
import type { ZLinkSession, ZLinkSessionContext } from '../../core/objects/index.js';
import type { BindingRoute } from './session-bindings.js';
import type { ObjectSubmission } from '../caller/index.js';
import type { SessionObjects } from './session-objects.js';
import type { SessionCloseReason } from '../../core/wire/index.js';

/** What a session needs of its host: handler tables, the job queue, the object layer, the counters. */
export interface SessionRunner {
  /** A relay's or bind's deadline when none is given: the runtime's `requestTimeoutMs`. */
  readonly timeoutMs: number;
  /** The `@SessionHandler` for (listener, kind, packet), if any. */
  handler(listener: string, kind: MessageKind, packet: string): HandlerFn | undefined;
  /** Runs `handler` under a job permit (the process's handler bound); resolves with its result. */
  run(handler: HandlerFn, payload: unknown, context: ZLinkSessionContext): Promise<unknown>;
  /** Counts a frame that ran no handler, or whose handler failed. */
  failed(listener: string, result: Exclude<DeliveryResult, 'ok'>, packet: string): void;
  /** The object layer, once started; `Unavailable` (naming `what`) before. */
  objects(what: string): SessionObjects;
  /**
   * Submits a relay on its stored route, in the order submitted (across sessions too), batched with the
   * others of this event-loop turn (see `SessionHost.submit`); its end goes to `sink`, once. Never throws.
   */
  submit(route: BindingRoute['route'], sub: ObjectSubmission, sink: CallSink): void;
  /** A binding of `session` leads nowhere now (`reason`): reported as the `session` event `unbound`. */
  unbound(session: ZLinkSession, reason: string, detail: string): void;
  /** Tells the Actor of `binding` that session `sessionId` ended (over the stored route; never throws). */
  ended(sessionId: string, binding: BindingRoute, reason: string): void;
  /**
   * Ends a session whose client is away (no connection to send a Close on): told as its close, to the
   * hooks and the bound Actors, as a session that closed on its connection would be.
   */
  endAway(session: ZLinkSession, reason: SessionCloseReason, detail: string): void;
}
