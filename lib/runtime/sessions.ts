import { configurationError } from '../core/errors.js';
import type { SessionListenerSnapshot, ZLinkEvents } from '../core/observe/index.js';
import type { JobQueue } from '../core/calls/index.js';
import type { LocationDescriptor } from '../core/ports/index.js';
import type { NormalizedOptions } from '../core/options/index.js';
import {
  type SessionHandlerRegistration,
  SessionHandlerRegistry,
  type SessionHookRegistration,
  SessionHooks,
  type ZLinkSession,
} from '../core/objects/index.js';
import { SessionHost } from '../spot/index.js';
import { NetSessionListener, type SessionListening } from '../transport/index.js';
import { bindListener } from './bind.js';
import type { BindContext, Topology } from './topology.js';

export interface SessionsConfig {
  readonly options: NormalizedOptions;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
}

/**
 * The runtime's session listeners (`sessions` option): a listener per name (transport, on `node:net`),
 * the Session owner's host above them
 * (spot/session), and the handlers and hooks registered for them. Bound after the meshes and objects
 * (a session's Actors ride on the object mesh); publishes nothing in the Location Store (game clients
 * find a gateway by the application's own means).
 */
export class RuntimeSessions implements Topology {
  readonly handlers = new SessionHandlerRegistry();
  readonly hooks = new SessionHooks();
  /** @internal the Session owner's host, which the object layer attaches to. */
  readonly host: SessionHost;
  private readonly listeners = new Map<string, SessionListening>();
  private started = false;

  constructor(private readonly config: SessionsConfig) {
    this.host = new SessionHost({
      listeners: config.options.sessions,
      handlers: this.handlers,
      hooks: this.hooks,
      jobs: config.jobs,
      events: config.events,
      timeoutMs: config.options.requestTimeoutMs,
    });
  }

  /**
   * `@SessionHandler`; only before the runtime starts. `Configuration` for a listener not configured
   * here, a duplicate, or a registration after the start.
   */
  registerHandler(registration: SessionHandlerRegistration): void {
    this.checkListener(registration.listener, `session handler ${registration.source}`);
    this.handlers.register(registration);
  }

  /** `@OnSessionOpen` / `@OnSessionClose`; `Configuration` as `registerHandler`. */
  registerHook(registration: SessionHookRegistration): void {
    this.checkListener(registration.listener, `session hook ${registration.source}`);
    this.hooks.register(registration);
  }

  private checkListener(listener: string, field: string): void {
    if (this.started)
      throw configurationError(field, 'handlers must be registered before the runtime starts');
    if (!this.config.options.sessions.has(listener))
      throw configurationError(
        field,
        `no session listener '${listener}' in sessions (configured: ${[...this.config.options.sessions.keys()].join(', ') || 'none'})`,
      );
  }

  /** The open session `id` owned by this node, if any. */
  session(id: string): ZLinkSession | undefined {
    return this.host.session(id);
  }

  /** Where clients connect to `listener`, once bound (`undefined` before, or for an unknown name). */
  endpoint(listener: string): string | undefined {
    return this.listeners.get(listener)?.endpoint;
  }

  /** Where this machine reaches `listener` (loopback for a wildcard bind), once bound. */
  localEndpoint(listener: string): string | undefined {
    return this.listeners.get(listener)?.localEndpoint;
  }

  async bind({ stillStarting }: BindContext): Promise<void> {
    this.started = true;
    const { options, events } = this.config;
    for (const [name, listenerOptions] of options.sessions) {
      const config = { options: listenerOptions, handler: this.host, events };
      const listener = new NetSessionListener(config);
      this.listeners.set(name, listener);
      await bindListener(() => listener.bind(), `sessions.${name}.listen`, stillStarting);
    }
  }

  descriptors(): LocationDescriptor[] {
    return [];
  }

  connect(): void {}

  discover(): Promise<unknown>[] {
    return [];
  }

  /** Every listener drains at once: no new session, answers in flight given their grace, then `goingAway`. */
  async drain(): Promise<void> {
    await Promise.all([...this.listeners.values()].map((l) => l.drain()));
  }

  async close(): Promise<void> {
    await Promise.all([...this.listeners.values()].map((l) => l.close()));
  }

  snapshot(): SessionListenerSnapshot[] {
    return [...this.listeners.values()].map((l) => {
      const s = l.snapshot();
      return { ...s, roomPushRecords: this.host.roomPushRecords(s.listener) };
    });
  }
}
