import { configurationError } from '../core/errors.js';
import type { SessionListenerSnapshot, ZLinkEvents } from '../core/observe/index.js';
import type { JobQueue } from '../core/calls/index.js';
import type { LocationDescriptor } from '../core/ports/index.js';
import type { NormalizedOptions, NormalizedSessionListen, SessionListenKind } from '../core/options/index.js';
import {
  type SessionHandlerRegistration,
  SessionHandlerRegistry,
  type SessionHookRegistration,
  SessionHooks,
  type ZLinkSession,
} from '../core/objects/index.js';
import { SessionHost } from '../spot/index.js';
import {
  NetSessionListener,
  type SessionListenerConfig,
  type SessionListening,
  WebSocketSessionListener,
} from '../transport/index.js';
import { bindListener } from './bind.js';
import type { BindContext, Topology } from './topology.js';

export interface SessionsConfig {
  readonly options: NormalizedOptions;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
}

/** Builds the listener of one entry, by its kind; every kind shares the name's config (and handler). */
type ListenerFactory = (config: SessionListenerConfig, entry: NormalizedSessionListen) => SessionListening;

const LISTENERS: Record<SessionListenKind, ListenerFactory> = {
  tcp: (config, entry) => new NetSessionListener(config, entry),
  tls: (config, entry) => new NetSessionListener(config, entry),
  websocket: (config, entry) => new WebSocketSessionListener(config, entry),
};

/**
 * The runtime's session listeners (`sessions` option): per name, a listener per `listen` entry, of the
 * entry's kind (transport: `node:net`, `node:tls`, WebSocket), all of a name sharing its handlers and
 * its `maxSessions`; the Session owner's host above them
 * (spot/session), and the handlers and hooks registered for them. Bound after the meshes and objects
 * (a session's Actors ride on the object mesh); publishes nothing in the Location Store (game clients
 * find a gateway by the application's own means).
 */
export class RuntimeSessions implements Topology {
  readonly handlers = new SessionHandlerRegistry();
  readonly hooks = new SessionHooks();
  /** @internal the Session owner's host, which the object layer attaches to. */
  readonly host: SessionHost;
  /** Each name's listeners, one per `listen` entry, in the entries' order. */
  private readonly listeners = new Map<string, SessionListening[]>();
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

  /** `@OnSessionOpen` and the other session hooks; `Configuration` as `registerHandler`. */
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

  /**
   * Where clients connect to `listener`'s first entry, once bound: a URL of its kind (`tcp://host:port`,
   * `tls://host:port`, `ws://host:port/path`, `wss://host:port/path`). `undefined` before, or for an
   * unknown name.
   */
  endpoint(listener: string): string | undefined {
    return this.listeners.get(listener)?.[0]?.endpoint;
  }

  /**
   * Where clients connect to each of `listener`'s entries, in the order of its `listen` option, once
   * bound (as `endpoint`); empty before the start or for an unknown name.
   */
  endpoints(listener: string): string[] {
    const out: string[] = [];
    for (const l of this.listeners.get(listener) ?? []) if (l.endpoint !== undefined) out.push(l.endpoint);
    return out;
  }

  /** Where this machine reaches `listener`'s first entry (loopback for a wildcard bind), once bound. */
  localEndpoint(listener: string): string | undefined {
    return this.listeners.get(listener)?.[0]?.localEndpoint;
  }

  /** Where this machine reaches each of `listener`'s entries, in order, once bound (as `endpoints`). */
  localEndpoints(listener: string): string[] {
    const out: string[] = [];
    for (const l of this.listeners.get(listener) ?? [])
      if (l.localEndpoint !== undefined) out.push(l.localEndpoint);
    return out;
  }

  async bind({ stillStarting }: BindContext): Promise<void> {
    this.started = true;
    const { options, events } = this.config;
    for (const [name, listenerOptions] of options.sessions) {
      // One config per name: its entries share the handler and the count `maxSessions` limits.
      const config = { options: listenerOptions, handler: this.host, events, count: { open: 0 } };
      const listeners: SessionListening[] = [];
      this.listeners.set(name, listeners);
      for (const entry of listenerOptions.listen) {
        const listener = LISTENERS[entry.kind](config, entry);
        listeners.push(listener);
        await bindListener(() => listener.bind(), entry.field, stillStarting);
      }
    }
  }

  descriptors(): LocationDescriptor[] {
    return [];
  }

  connect(): void {}

  discover(): Promise<unknown>[] {
    return [];
  }

  /**
   * Every listener drains at once: no new session, answers in flight given their grace, then `goingAway`
   * (sessions whose client is away after a drop end `goingAway` at once: none resumes from then on).
   */
  async drain(): Promise<void> {
    this.host.drain();
    await Promise.all(this.all().map((l) => l.drain()));
  }

  async close(): Promise<void> {
    this.host.drain();
    await Promise.all(this.all().map((l) => l.close()));
  }

  private all(): SessionListening[] {
    return [...this.listeners.values()].flat();
  }

  /** One entry per listener entry: a name's entries together and in their order (health relies on it). */
  snapshot(): SessionListenerSnapshot[] {
    return this.all().map((l) => {
      const s = l.snapshot();
      return {
        ...s,
        roomPushRecords: this.host.records.roomPushRecords(s.listener),
        ...this.host.resumeSnapshot(s.listener),
      };
    });
  }
}
