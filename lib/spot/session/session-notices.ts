import type { SessionHooks, ZLinkSession } from '../../core/objects/index.js';
import type { SessionDropReason } from '../../core/objects/index.js';
import type { CallSink } from '../../core/calls/index.js';
import type { ObjectSubmission } from '../caller/index.js';
import type { BindingRoute } from './session-bindings.js';
import type { SessionObjects } from './session-objects.js';
import type { OwnedSession } from './owned-session.js';
import {
  SESSION_CLOSED_PACKET,
  SESSION_DROPPED_PACKET,
  SESSION_RESUMED_PACKET,
  endPayload,
} from './session-turns.js';

/** A notice's end: nobody waits for it (an owner that is gone hears nothing, and that is all). */
const UNHEARD: CallSink = { resolve: () => undefined, reject: () => undefined };

/** How the notices reach bound Actors: the host's object layer and its relay batch. */
export interface NoticeRoutes {
  /** The object layer of the sessions' mesh, once attached. */
  readonly layerNow: SessionObjects | undefined;
  /** Submits on a stored route in the node's relay batch, in order with the relays. */
  submit(route: BindingRoute['route'], sub: ObjectSubmission, sink: CallSink): void;
  /** Sends the relay batch now. */
  flushBatch(): void;
}

/**
 * What a session's life tells the application on the Session owner: the gateway's hooks
 * (`@OnSessionClose`, `@OnSessionDropped`, `@OnSessionResumed`) and each bound Actor (a runtime send over
 * its binding's stored route: `onSessionClosed`, `onSessionDropped`, `onSessionResumed`). A hook's
 * failure is its own; an owner that is gone hears nothing.
 */
export class SessionNotices {
  constructor(
    private readonly hooks: SessionHooks,
    private readonly timeoutMs: number,
    private readonly routes: NoticeRoutes,
  ) {}

  /** Calls the listener's hook `name`, if it has one. */
  hook(name: 'close' | 'dropped' | 'resumed', session: ZLinkSession, ...args: unknown[]): void {
    const registration = this.hooks.get(name, session.listener);
    if (!registration) return;
    try {
      const fn = registration.fn as (session: ZLinkSession, ...rest: unknown[]) => unknown;
      void Promise.resolve(fn(session, ...args)).catch(() => undefined);
    } catch {
      // The hook's failure is its own; the session goes on (or is gone) either way.
    }
  }

  /** The connection of a resumable session dropped (docs/sessions.md#resume-after-a-drop). */
  dropped(session: OwnedSession, reason: SessionDropReason, detail: string): void {
    this.hook('dropped', session, reason, detail);
    this.toActors(session, SESSION_DROPPED_PACKET, reason);
  }

  /** Its client resumed it, and has been sent what was held for it. */
  resumed(session: OwnedSession): void {
    this.hook('resumed', session);
    this.toActors(session, SESSION_RESUMED_PACKET, '');
  }

  /** Tells the Actor of `binding` that session `sessionId` ended, behind every relay of the session. */
  closed(sessionId: string, binding: BindingRoute, reason: string): void {
    const layer = this.routes.layerNow;
    if (layer === undefined) return;
    // Behind every relay the session made: they leave first.
    this.routes.flushBatch();
    const sub = this.noticeOf(layer, sessionId, binding, SESSION_CLOSED_PACKET, reason);
    // Over the stored route like every message of the session; an owner that is gone hears nothing.
    layer.callOnRoute(binding.route, sub, UNHEARD);
  }

  /**
   * Tells each bound Actor whose binding leads somewhere, as a runtime turn of the Actor behind every
   * message the session relayed to it before: in the node's relay batch, or in a move's hold while the
   * Actor moves (docs/protocol.md#bound-actors-that-move).
   */
  private toActors(session: OwnedSession, packet: string, reason: string): void {
    const layer = this.routes.layerNow;
    if (layer === undefined) return;
    for (const binding of session.bindings.all()) {
      if (binding.lost !== undefined) continue;
      const sub = this.noticeOf(layer, session.id, binding, packet, reason);
      const held = session.bindings.held(binding.actorId);
      if (held !== undefined) held.push({ sub, sink: UNHEARD });
      else this.routes.submit(binding.route, sub, UNHEARD);
    }
  }

  /** A runtime send to a bound Actor about its session. */
  private noticeOf(
    layer: SessionObjects,
    sessionId: string,
    binding: BindingRoute,
    packet: string,
    reason: string,
  ): ObjectSubmission {
    return {
      messageKind: 'send',
      objectKind: 'actor',
      id: binding.actorId,
      packet,
      metadata: undefined,
      payload: endPayload(layer.self.rid, sessionId, binding.bindingGeneration, reason),
      trace: undefined,
      timeoutMs: this.timeoutMs,
      signal: undefined,
    };
  }
}
