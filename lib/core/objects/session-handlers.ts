import { configurationError } from '../errors.js';
import { type HandlerFn, HandlerRegistry, type MessageKind } from '../calls/handlers.js';
import type { SessionCloseReason } from '../session-wire/index.js';
import type { ZLinkSession, ZLinkSessionHello } from './session-context.js';

/**
 * The handlers a Session owner runs for its sessions (`@SessionHandler(listener, packet)`), by
 * (listener, kind, packet), and its lifecycle hooks: one `@OnSessionOpen` and one `@OnSessionClose`
 * per listener.
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
 * `@OnSessionOpen` / `@OnSessionClose`: a method called with its arguments (no pipeline). An open hook
 * refuses the session by returning (or resolving to) `false`, or by throwing.
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
    };

export class SessionHooks {
  private readonly hooks = new Map<string, SessionHookRegistration>();

  /** Throws `Configuration` naming both places when the listener has this hook already. */
  register(registration: SessionHookRegistration): void {
    const key = `${registration.hook}\0${registration.listener}`;
    const existing = this.hooks.get(key);
    if (existing) {
      throw configurationError(
        `${registration.hook === 'open' ? '@OnSessionOpen' : '@OnSessionClose'} ${registration.listener}`,
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
