import type { MessageKind } from '../../core/calls/index.js';
import type { ZLinkSession as Session } from '../../core/objects/index.js';
import { handlerDecorator, methodDecorator, checkName } from './handler-decorator.js';
import { ZLINK_SESSION_HANDLER, ZLINK_SESSION_HOOK, ZLinkParamtype } from './zlink.constants.js';
import { paramDecorator } from './params.decorator.js';

/** What `@SessionHandler` records on a method. @internal */
export interface SessionHandlerMetadata {
  readonly listener: string;
  readonly packet: string;
  readonly kind: MessageKind;
}

/** What `@OnSessionOpen` and the other session hooks record on a method. @internal */
export interface SessionHookMetadata {
  readonly listener: string;
  readonly hook: 'open' | 'close' | 'dropped' | 'resumed';
}

export interface SessionHandlerOptions {
  /** `'request'` answers the client's Request; `'send'` takes its one-way Send. @default 'request' */
  readonly kind?: MessageKind;
}

/**
 * Marks a method as what the Session owner itself does with `packetName` from a session of listener
 * `listener` (login, join a match): it runs through Nest's pipeline with `(payload, ZLinkSessionContext)`
 * — inject the session with `@ZLinkSession()` — one frame of a session at a time, in arrival order. A
 * request's return value is its Reply; a throw its Error. Bootstrap fails with `Configuration` for a
 * duplicate or a listener not under `sessions`.
 */
export function SessionHandler(
  listener: string,
  packetName: string,
  options: SessionHandlerOptions = {},
): MethodDecorator {
  const kind = options.kind ?? 'request';
  const entry: SessionHandlerMetadata = { listener, packet: packetName, kind };
  return handlerDecorator(
    'SessionHandler',
    ZLINK_SESSION_HANDLER,
    { name: 'listener', value: listener },
    packetName,
    kind,
    entry,
  );
}

function hookDecorator(name: string, hook: SessionHookMetadata['hook'], listener: string): MethodDecorator {
  const entry: SessionHookMetadata = { listener, hook };
  return methodDecorator(name, ZLINK_SESSION_HOOK, entry, (where) => checkName(where, 'listener', listener));
}

/**
 * Marks the method a new session of `listener` asks before its Welcome: called as
 * `(session: ZLinkSession, hello: ZLinkSessionHello)` (the Hello's token in `hello.token`), it admits the
 * session unless it returns (or resolves to) `false` or throws — then the client gets a Close `refused`.
 * One per listener. It is a plain call, not Nest's pipeline (as a lifecycle hook is).
 */
export function OnSessionOpen(listener: string): MethodDecorator {
  return hookDecorator('OnSessionOpen', 'open', listener);
}

/**
 * Marks the method a session of `listener` ends with, once per welcomed session however it ended:
 * `(session: ZLinkSession, reason: SessionCloseReason, detail: string)`. One per listener; a plain call.
 */
export function OnSessionClose(listener: string): MethodDecorator {
  return hookDecorator('OnSessionClose', 'close', listener);
}

/**
 * Marks the method a resumable session of `listener` calls when its connection dropped and its client
 * may resume it within `resumeGraceMs` (docs/sessions.md#resume-after-a-drop): `(session: ZLinkSession,
 * reason: SessionDropReason, detail: string)`, `reason` `lost`, `idleTimeout` or `replaced`. The session
 * stays open meanwhile; past the grace it closes `resumeExpired` (`@OnSessionClose`). One per listener;
 * a plain call.
 */
export function OnSessionDropped(listener: string): MethodDecorator {
  return hookDecorator('OnSessionDropped', 'dropped', listener);
}

/**
 * Marks the method a session of `listener` calls when its client resumed it after a drop, on a new
 * connection, once what was held for it was sent: `(session: ZLinkSession)`. One per listener; a plain
 * call.
 */
export function OnSessionResumed(listener: string): MethodDecorator {
  return hookDecorator('OnSessionResumed', 'resumed', listener);
}

/** The session a handler serves (`ctx.session`). */
export type ZLinkSession = Session;

/**
 * Injects the `ZLinkSession` of the message in a `@SessionHandler` (and in an `@ActorHandler` reached
 * through a session binding): `handle(@ZLinkSession() session: ZLinkSession)`. `undefined` elsewhere.
 */
export function ZLinkSession(): ParameterDecorator {
  return paramDecorator(ZLinkParamtype.SESSION, undefined, []);
}
