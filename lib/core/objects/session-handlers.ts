import { configurationError } from '../errors.js';
import { type HandlerFn, HandlerRegistry, type MessageKind } from '../calls/handlers.js';
import type { SessionCloseReason } from '../session-wire/index.js';
import type { ZLinkSession, ZLinkSessionHello } from './session-context.js';

/**
 * The handlers a Session owner runs for its sessions (`@SessionHandler(listener, packet)`), by
 * (listener, kind, packet), and its lifecycle hooks: at most one of each (`@OnSessionOpen`,
 * `@OnSessionClose`, `@OnSessionDropped`, `@OnSessionResumed`) per listener.
 */
export interface SessionHandlerRegistration {
  readonly listener: string;
  readonly kind: MessageKind;
  readonly packet: string;
  /** Called with `(payload, ZLinkSessionContext)`. */
  readonly handler: HandlerFn;
  readonly source: string;
}

export class SessionHandlerRegistry extends HandlerRegistry<SessionHandlerRegistration> {
  constructor() {
    super((r) => r.listener, 'session handler');
  }
}

/**
 * `@OnSessionOpen` / `@OnSessionClose` / `@OnSessionDropped` / `@OnSessionResumed`: a method called with its
 * arguments (no pipeline). An open hook refuses the session by returning (or resolving to) `false`, or
 * by throwing.
 */
export type SessionHookRegistration =
  | {
      readonly listener: string;
      readonly hook: 'open';
      readonly fn: (session: ZLinkSession, hello: ZLinkSessionHello) => unknown;
      readonly source: string;
    }
  | {
      readonly listener: string;
      readonly hook: 'close';
      readonly fn: (session: ZLinkSession, reason: SessionCloseReason, detail: string) => unknown;
      readonly source: string;
    }
  | {
      readonly listener: string;
      readonly hook: 'dropped';
      readonly fn: (session: ZLinkSession, reason: SessionDropReason, detail: string) => unknown;
      readonly source: string;
    }
  | {
      readonly listener: string;
      readonly hook: 'resumed';
      readonly fn: (session: ZLinkSession) => unknown;
      readonly source: string;
    };

/**
 * Why a resumable session's connection dropped (docs/sessions.md#resume-after-a-drop): `lost` (it ended
 * without a Close frame), `idleTimeout` (nothing heard for the listener's `idleTimeoutMs`), `replaced`
 * (the client resumed the session on another connection before this one was seen to die).
 */
export type SessionDropReason = 'lost' | 'idleTimeout' | 'replaced';

const HOOK_DECORATORS: Record<SessionHookRegistration['hook'], string> = {
  open: '@OnSessionOpen',
  close: '@OnSessionClose',
  dropped: '@OnSessionDropped',
  resumed: '@OnSessionResumed',
};

export class SessionHooks {
  private readonly hooks = new Map<string, SessionHookRegistration>();

  /** Throws `Configuration` naming both places when the listener has this hook already. */
  register(registration: SessionHookRegistration): void {
    const key = `${registration.hook}\0${registration.listener}`;
    const existing = this.hooks.get(key);
    if (existing) {
      throw configurationError(
        `${HOOK_DECORATORS[registration.hook]} ${registration.listener}`,
        `declared twice: ${existing.source} and ${registration.source}`,
      );
    }
    this.hooks.set(key, registration);
  }

  get<H extends SessionHookRegistration['hook']>(
    hook: H,
    listener: string,
  ): Extract<SessionHookRegistration, { hook: H }> | undefined {
    return this.hooks.get(`${hook}\0${listener}`) as
      Extract<SessionHookRegistration, { hook: H }> | undefined;
  }
}
