import { randomBytes } from 'node:crypto';
import { ZLinkError, errorMessage } from '../../core/errors.js';
import type { SessionCloseReason, SessionResumeAsk } from '../../core/wire/index.js';
import type { DeliveryResult, ScopeMetrics, ZLinkEvents } from '../../core/observe/index.js';
import type { CallSink, HandlerFn, JobQueue, MessageKind } from '../../core/calls/index.js';
import type { SessionLink, SessionLinkHandler } from '../../core/ports/index.js';
import type { NormalizedSessionListener } from '../../core/options/index.js';
import type {
  SessionHandlerRegistry,
  SessionHooks,
  ZLinkSession,
  ZLinkSessionContext,
} from '../../core/objects/index.js';
import { OwnedSession } from './owned-session.js';
import type { SessionRunner } from './session-runner.js';
import type { BindingRoute } from './session-bindings.js';
import type { SessionObjects } from './session-objects.js';
import { SessionRecords } from './session-records.js';
import { SessionResume } from './session-resume.js';
import { SessionNotices } from './session-notices.js';
import { SessionResumes } from './session-resumes.js';
import type { ObjectSubmission } from '../caller/index.js';
import type { ReadyRoute } from '../resolve/index.js';

/** Items of one relay in the host's batch: the object layer, the route, the submission, the sink. */
const BATCHED = 4;

export interface SessionHostConfig {
  readonly listeners: ReadonlyMap<string, NormalizedSessionListener>;
  readonly handlers: SessionHandlerRegistry;
  readonly hooks: SessionHooks;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
  /** A relay's and a bind's deadline when none is given (`requestTimeoutMs`). */
  readonly timeoutMs: number;
}

/**
 * The Session owner's side of every session listener of a runtime: it admits a session after its
 * Hello (asking `@OnSessionOpen`), gives each session its ordered turns, and hears its end once
 * (`@OnSessionClose`). It is the layer above the listener's SessionLinkHandler port.
 *
 * It also keeps a resumable session whose connection dropped (docs/sessions.md#resume-after-a-drop):
 * found by id whichever listener entry the client comes back on, for `resumeGraceMs`, its turns going
 * on and its output held; a Hello with its token then moves it to the new connection.
 */
export class SessionHost implements SessionLinkHandler, SessionRunner {
  private readonly byLink = new Map<SessionLink, OwnedSession>();
  private readonly byId = new Map<string, OwnedSession>();
  /** Sessions of each listener, welcomed and not ended (the client there or away): `maxSessions` bounds them. */
  private readonly counts = new Map<string, number>();
  private readonly notices: SessionNotices;
  /** What the object layer hands this node's sessions (its `SessionSink`). */
  readonly records: SessionRecords;
  private readonly resumes: SessionResumes;
  private readonly metrics = new Map<string, ScopeMetrics>();
  /** Session ids: a random prefix per run and a counter, so an id is never reused by this node run. */
  private readonly idPrefix = randomBytes(6).toString('base64url');
  private nextId = 0;
  /** The object layer of the sessions' mesh, once the runtime started it (`attach`). */
  private layer: SessionObjects | undefined;

  constructor(private readonly config: SessionHostConfig) {
    this.notices = new SessionNotices(config.hooks, config.timeoutMs, this);
    this.resumes = new SessionResumes(
      {
        byId: this.byId,
        byLink: this.byLink,
        end: (session, reason, detail) => this.end(session, reason, detail),
      },
      this.notices,
    );
    this.records = new SessionRecords({
      byId: this.byId,
      listeners: config.listeners,
      events: config.events,
      layerNow: () => this.layer,
      flushBatch: () => this.flushBatch(),
      unbound: (session, reason, detail) => this.unbound(session, reason, detail),
    });
    for (const [listener, options] of config.listeners)
      this.metrics.set(listener, config.events.metrics.scope('session', listener, options.mesh));
  }

  get timeoutMs(): number {
    return this.config.timeoutMs;
  }

  /** The object layer, once attached. */
  get layerNow(): SessionObjects | undefined {
    return this.layer;
  }

  /** The object layer sessions bind over; the runtime attaches it once started (and detaches at close). */
  attach(layer: SessionObjects | undefined): void {
    this.layer = layer;
  }

  objects(what: string): SessionObjects {
    if (this.layer === undefined)
      throw new ZLinkError('Unavailable', `${what}: the object layer of the sessions' mesh is not running`);
    return this.layer;
  }

  /** The open session `id` owned here. */
  session(id: string): ZLinkSession | undefined {
    return this.byId.get(id);
  }

  opened(link: SessionLink, token: unknown, resume?: SessionResumeAsk): void {
    if (resume?.kind === 'resume') return this.resumes.resume(link, resume);
    const options = this.config.listeners.get(link.listener) as NormalizedSessionListener;
    // Away sessions hold their seat: they count toward `maxSessions` with the connected ones.
    if ((this.counts.get(link.listener) ?? 0) >= options.maxSessions)
      return link.close('full', `${options.maxSessions} sessions are open`);
    const id = `${this.idPrefix}.${(this.nextId++).toString(36)}`;
    const session = new OwnedSession(id, link, this, options.maxInFlight, options.maxPendingBytes);
    if (resume?.kind === 'new' && options.resumeGraceMs > 0)
      session.resume = new SessionResume(options.resumeGraceMs);
    this.byLink.set(link, session);
    const hook = this.config.hooks.get('open', link.listener);
    if (!hook) return this.admit(session);
    let answer: unknown;
    try {
      answer = hook.fn(session, { token });
    } catch (error) {
      return link.close('refused', errorMessage(error));
    }
    Promise.resolve(answer).then(
      (verdict) => {
        if (verdict === false) link.close('refused', 'refused by the application');
        else this.admit(session);
      },
      (error: unknown) => link.close('refused', errorMessage(error)),
    );
  }

  private admit(session: OwnedSession): void {
    if (!session.link.open) return;
    this.byId.set(session.id, session);
    this.counts.set(session.listener, (this.counts.get(session.listener) ?? 0) + 1);
    session.link.welcome(session.id, this.resumes.welcomeTerms(session));
  }

  acked(link: SessionLink, received: number): void {
    this.resumes.acked(link, received);
  }

  request(link: SessionLink, correlation: number, packet: string, payload: Uint8Array): void {
    this.byLink.get(link)?.enqueue('request', correlation, packet, payload);
  }

  send(link: SessionLink, packet: string, payload: Uint8Array): void {
    this.byLink.get(link)?.enqueue('send', 0, packet, payload);
  }

  closed(link: SessionLink, reason: SessionCloseReason, detail: string, dropped = false): void {
    const session = this.byLink.get(link);
    if (!session) return;
    this.byLink.delete(link);
    // A session refused before its Welcome was never the application's: its close hook does not run.
    if (!this.byId.has(session.id)) return;
    // A resumable session keeps its seat for its client (docs/sessions.md#resume-after-a-drop).
    if (dropped && this.resumes.detach(session, reason, detail)) return;
    this.end(session, reason, detail);
  }

  endAway(session: ZLinkSession, reason: SessionCloseReason, detail: string): void {
    const owned = this.byId.get(session.id);
    if (owned?.away) this.end(owned, reason, detail);
  }

  /**
   * A session ends for good, once: its seals are given up, its bound Actors and `@OnSessionClose` hear
   * it. One whose client is away has no connection to tell it: the `session` event `closed` is told
   * here (the listener tells the others).
   */
  private end(session: OwnedSession, reason: SessionCloseReason, detail: string): void {
    if (session.ended || !this.byId.delete(session.id)) return;
    session.ended = true;
    this.byLink.delete(session.link);
    const { listener } = session;
    this.counts.set(listener, (this.counts.get(listener) ?? 1) - 1);
    if (session.away) {
      this.resumes.left(session);
      this.config.events.emit({
        type: 'session',
        state: 'closed',
        listener,
        sessionId: session.id,
        reason,
        detail,
      });
    }
    session.resume?.clear();
    for (const h of session.bindings.unsealAll())
      h.sink.reject(new ZLinkError('Unavailable', `session '${session.id}' closed (${reason})`));
    for (const binding of session.bindings.all())
      if (binding.lost === undefined) this.ended(session.id, binding, reason);
    this.notices.hook('close', session, reason, detail);
  }

  /** Ends every session whose client is away (`goingAway`), and resumes none from now on: a drain. */
  drain(): void {
    this.resumes.drain();
  }

  /** Resume counts of `listener` for its snapshot. */
  resumeSnapshot(listener: string): { detached: number; resumes: number; resumesRefused: number } {
    return this.resumes.snapshot(listener);
  }

  /**
   * A relay waits for the end of the event loop's I/O phase and leaves with every other relay read in
   * it: frames arrive one STREAM message at a time, and submitting each at once would send each in a
   * mesh message of its own (the mesh link flushes at the end of each one's microtasks), a zeromq send
   * per relay. Order is kept: one FIFO for the node.
   */
  submit(route: BindingRoute['route'], sub: ObjectSubmission, sink: CallSink): void {
    let layer: SessionObjects;
    try {
      layer = this.objects(`relay ${sub.packet}`);
    } catch (error) {
      sink.reject(error);
      return;
    }
    this.batch.push(layer, route, sub, sink);
    if (this.batch.length === BATCHED) setImmediate(this.flushBatch);
  }

  /** The relays waiting for the end of the I/O phase, flat: each `BATCHED` items (no object per relay). */
  private batch: (SessionObjects | ReadyRoute | ObjectSubmission | CallSink)[] = [];

  readonly flushBatch = (): void => {
    const batch = this.batch;
    this.batch = [];
    for (let i = 0; i < batch.length; i += BATCHED)
      (batch[i] as SessionObjects).callOnRoute(
        batch[i + 1] as ReadyRoute,
        batch[i + 2] as ObjectSubmission,
        batch[i + 3] as CallSink,
      );
  };

  ended(sessionId: string, binding: BindingRoute, reason: string): void {
    this.notices.closed(sessionId, binding, reason);
  }

  /** A binding of `session` leads nowhere now (`reason`): the `session` event `unbound`. */
  unbound(session: ZLinkSession, reason: string, detail: string): void {
    this.config.events.emit({
      type: 'session',
      state: 'unbound',
      listener: session.listener,
      sessionId: session.id,
      reason,
      detail,
    });
  }

  handler(listener: string, kind: MessageKind, packet: string): HandlerFn | undefined {
    return this.config.handlers.lookup(listener, kind, packet)?.handler;
  }

  async run(handler: HandlerFn, payload: unknown, context: ZLinkSessionContext): Promise<unknown> {
    const { jobs } = this.config;
    await jobs.acquire();
    try {
      const result = await handler(payload, context);
      const scope = this.metrics.get(context.listener);
      if (scope) scope.handlers.ok++;
      return result;
    } finally {
      jobs.release();
    }
  }

  failed(listener: string, result: Exclude<DeliveryResult, 'ok'>, packet: string): void {
    this.config.events.emit({ type: 'delivery', result, route: 'session', channel: listener, packet });
  }
}
