import { REMOTE_CODES, ZLinkError, toWireError } from '../../core/errors.js';
import type { RemoteAddress } from '../../core/kinds.js';
import {
  EMPTY_METADATA,
  type SessionCloseReason,
  decodePayload,
  encodePayload,
} from '../../core/wire/index.js';
import type { HandlerFn, MessageKind } from '../../core/calls/index.js';
import type { SessionLink } from '../../core/ports/index.js';
import type { ActorRef, ZLinkRelayOptions, ZLinkSessionContext } from '../../core/objects/index.js';
import { SessionBindings, bindingRouteOf } from './session-bindings.js';
import { type RelayingSession, SessionFrame, SessionRelays } from './session-relays.js';
import type { SessionRunner } from './session-runner.js';
import type { FrameToHold, SessionResume } from './session-resume.js';

/**
 * A session on its Session owner: the public `ZLinkSession`, its bindings, and the queue that gives
 * the session one turn at a time, in the order its frames arrived. A request's turn ends when its
 * `@SessionHandler` answered; a relay's when it was handed to its binding route, so relayed requests
 * still pipeline and reach the Actor in session order. At most `maxInFlight` frames wait: one more
 * closes the session (`tooManyInFlight`).
 *
 * A resumable session (docs/sessions.md#resume-after-a-drop) outlives its connection: its Replies,
 * Errors and Pushes go through `resume`, which holds each until the client acknowledges it, and while
 * the client is away (`away`) its frames keep their turns and their answers wait there.
 */
export class OwnedSession implements RelayingSession {
  readonly data: Record<string, unknown> = {};
  readonly bindings = new SessionBindings();
  /** Set for a session the client may resume. */
  resume: SessionResume | undefined;
  /** The client is away (its connection dropped) and may resume it. */
  away = false;
  /** The session has ended, for good. */
  ended = false;
  private readonly queue: SessionFrame[] = [];
  private running = false;
  /** Its relays to its bound Actors (`relay`, and the frames no `@SessionHandler` takes). */
  private readonly relays: SessionRelays;

  constructor(
    readonly id: string,
    /** The connection the session is on now: a resume moves it to another. */
    public link: SessionLink,
    private readonly runner: SessionRunner,
    private readonly maxInFlight: number,
    private readonly maxPendingBytes: number,
  ) {
    this.relays = new SessionRelays(this, runner, maxInFlight, this.next);
  }

  get listener(): string {
    return this.link.listener;
  }

  get remoteAddress(): RemoteAddress {
    return this.link.remoteAddress;
  }

  get open(): boolean {
    return !this.ended && (this.away || this.link.open);
  }

  get connected(): boolean {
    return !this.ended && !this.away && this.link.open;
  }

  /** Answers request `correlation` with a payload, once, on the connection the session is on. */
  answer(correlation: number, payload: Uint8Array): boolean {
    const r = this.resume;
    if (r === undefined) return this.link.reply(correlation, payload);
    if (!r.pending.delete(correlation)) return false;
    return (
      this.held({ kind: 'reply', correlation, payload }) &&
      (this.away || this.link.reply(correlation, payload))
    );
  }

  /** Answers request `correlation` with an error, as `answer`. */
  fail(correlation: number, code: string, message: string, details?: unknown): boolean {
    const r = this.resume;
    if (r === undefined) return this.link.error(correlation, code, message, details);
    if (!r.pending.delete(correlation)) return false;
    return (
      this.held({ kind: 'error', correlation, code, message, details }) &&
      (this.away || this.link.error(correlation, code, message, details))
    );
  }

  /** A Push (its payload's msgpack bytes) for the client; `false` once the session has ended. */
  deliver(packet: string, payload: Uint8Array): boolean {
    if (this.resume === undefined) return this.link.push(packet, payload);
    if (this.ended) return false;
    return this.held({ kind: 'push', packet, payload }) && (this.away || this.link.push(packet, payload));
  }

  /**
   * Holds a frame of a resumable session until the client acknowledges it; more than
   * `maxPendingBytes` held already ends the session `slowConsumer` (docs/sessions.md#slow-consumers).
   */
  private held(frame: FrameToHold): boolean {
    if ((this.resume as SessionResume).hold(frame, this.maxPendingBytes)) return true;
    this.close('slowConsumer', `more than ${this.maxPendingBytes} bytes waited for the client`);
    return false;
  }

  get actors(): readonly string[] {
    return this.bindings.all().map((b) => b.actorId);
  }

  push(packet: string, msg: unknown): boolean {
    if (!this.open) return false;
    return this.deliver(packet, encodePayload(msg));
  }

  close(reason: SessionCloseReason = 'normal', detail = 'closed by the application'): void {
    if (this.away) this.runner.endAway(this, reason, detail);
    else this.link.close(reason, detail);
  }

  async bind(actor: ActorRef, options: { readonly timeoutMs?: number } = {}): Promise<void> {
    const what = `bind session '${this.id}' to actor '${actor?.id}'`;
    const objects = this.runner.objects(what);
    if (actor?.kind !== 'actor' || actor.mesh !== objects.mesh)
      throw new ZLinkError('InvalidArgument', `${what}: needs an ActorRef of mesh '${objects.mesh}'`);
    if (!this.open) throw new ZLinkError('Unavailable', `${what}: the session has closed`);
    const bindingGeneration = this.bindings.nextGeneration();
    const previous = this.bindings.get(actor.id)?.route.owner;
    const binding = {
      ownerRid: objects.self.rid,
      ownerGeneration: objects.self.nodeGeneration,
      listener: this.listener,
      sessionId: this.id,
      bindingGeneration,
    };
    const answer = await objects.bind(actor, binding, previous, options.timeoutMs ?? this.runner.timeoutMs);
    const route = bindingRouteOf(objects.mesh, actor.id, bindingGeneration, answer);
    // Closed while the bind was out: the Actor is told, as for any binding of a session that ends.
    if (!this.open) {
      this.runner.ended(this.id, route, 'normal');
      throw new ZLinkError('Unavailable', `${what}: the session closed while binding`);
    }
    this.bindings.set(route);
  }

  relay(packet: string, msg: unknown, options: ZLinkRelayOptions = {}): Promise<unknown> {
    return this.relays.relay(packet, msg, options);
  }

  /**
   * The seal of `actorId` ends: its held relays go, in order, on the binding's route now (the new one
   * after a commit, the old one after an abort).
   */
  released(actorId: string): void {
    this.relays.released(actorId);
  }

  /** A frame of the client's, in arrival order. */
  enqueue(kind: MessageKind, correlation: number, packet: string, payload: Uint8Array): void {
    if (this.queue.length >= this.maxInFlight) {
      this.close('tooManyInFlight', `more than ${this.maxInFlight} messages waiting`);
      return;
    }
    const r = this.resume;
    if (r !== undefined) {
      // Counted as taken: a resume tells the client it need not send it again.
      r.received++;
      if (kind === 'request') r.pending.add(correlation);
    }
    this.queue.push(new SessionFrame(this.relays, kind, correlation, packet, payload));
    if (!this.running) this.drain();
  }

  /**
   * Gives the queued frames their turns, in order, each to its end, or until one holds the next back
   * (its `@SessionHandler` running, a send its relay holds back): `next` carries on then.
   */
  private drain(): void {
    this.running = true;
    for (let work = this.queue.shift(); work !== undefined; work = this.queue.shift()) {
      if (!this.open) {
        this.queue.length = 0;
        break;
      }
      if (this.turn(work)) return;
    }
    this.running = false;
  }

  /** The turn that held the next frames back has ended. */
  private readonly next = (): void => this.drain();

  /**
   * One frame: its `@SessionHandler`, else a relay to the primary Actor; answered once; never throws.
   * Returns whether the next frame waits for `next`.
   */
  private turn(work: SessionFrame): boolean {
    const { kind, correlation, packet } = work;
    const handler = this.runner.handler(this.listener, kind, packet);
    if (!handler) {
      const primary = this.bindings.primary;
      if (primary !== undefined) return this.relays.relayFrame(primary, work);
      this.runner.failed(this.listener, 'no_handler', packet);
      if (kind === 'request')
        this.fail(correlation, REMOTE_CODES.noHandler, `no handler for '${packet}' on this session`);
      return false;
    }
    const decoded = decodePayload(work.payload);
    if (!decoded.ok) {
      this.runner.failed(this.listener, 'decode_error', packet);
      if (kind === 'request') this.fail(correlation, REMOTE_CODES.decodeError, decoded.reason);
      return false;
    }
    void this.handle(handler, decoded.value, work).then(this.next);
    return true;
  }

  /** A frame's `@SessionHandler`, under a job permit, its request answered once; never rejects. */
  private async handle(handler: HandlerFn, value: unknown, work: SessionFrame): Promise<void> {
    const { kind, correlation, packet } = work;
    const context: ZLinkSessionContext = {
      target: 'session',
      listener: this.listener,
      kind,
      packet,
      correlation: kind === 'request' ? correlation : undefined,
      metadata: EMPTY_METADATA,
      session: this,
    };
    try {
      const result = await this.runner.run(handler, value, context);
      if (kind === 'request') this.answer(correlation, encodePayload(result));
    } catch (error) {
      this.runner.failed(this.listener, 'handler_error', packet);
      const wire = toWireError(error);
      if (kind === 'request') this.fail(correlation, wire.code, wire.message, wire.details);
    }
  }
}
