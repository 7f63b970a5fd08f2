import { REMOTE_CODES, ZLinkError, toWireError } from '../../core/errors.js';
import type { RemoteAddress } from '../../core/kinds.js';
import {
  EMPTY_METADATA,
  type SessionCloseReason,
  decodePayload,
  encodePayload,
} from '../../core/wire/index.js';
import type { MessageKind } from '../../core/calls/index.js';
import type { SessionLink } from '../../core/ports/index.js';
import type {
  ActorRef,
  ZLinkRelayOptions,
  ZLinkSession,
  ZLinkSessionContext,
} from '../../core/objects/index.js';
import type { ObjectSubmission } from '../caller/index.js';
import { packSessionStamp } from '../wire/index.js';
import { type BindingRoute, SessionBindings, bindingRouteOf, lostError } from './session-bindings.js';
import type { SessionRunner } from './session-runner.js';
import type { FrameToHold, SessionResume } from './session-resume.js';

/** One frame of a session waiting for its turn. */
interface SessionWork {
  readonly kind: MessageKind;
  /** The client's correlation (requests); 0 for a send. */
  readonly correlation: number;
  readonly packet: string;
  readonly payload: Uint8Array;
}

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
export class OwnedSession implements ZLinkSession {
  readonly data: Record<string, unknown> = {};
  readonly bindings = new SessionBindings();
  /** Set for a session the client may resume. */
  resume: SessionResume | undefined;
  /** The client is away (its connection dropped) and may resume it. */
  away = false;
  /** The session has ended, for good. */
  ended = false;
  private readonly queue: SessionWork[] = [];
  private running = false;
  /** The session sequence: one number per message relayed, in the order the session accepted them. */
  private sequence = 0;
  /** Sends relayed and not yet handed to their route (see `relayFrame`). */
  private handing = 0;
  private readonly sendHanded = (): void => {
    this.handing--;
  };

  constructor(
    readonly id: string,
    /** The connection the session is on now: a resume moves it to another. */
    public link: SessionLink,
    private readonly runner: SessionRunner,
    private readonly maxInFlight: number,
    private readonly maxPendingBytes: number,
  ) {}

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
    const what = `relay ${packet} from session '${this.id}'`;
    const binding = options.actor === undefined ? this.bindings.primary : this.bindings.get(options.actor);
    if (binding === undefined)
      return Promise.reject(
        new ZLinkError(
          'NotFound',
          `${what}: no ${options.actor ? `actor '${options.actor}'` : 'actor'} is bound`,
        ),
      );
    let payload: Uint8Array;
    try {
      payload = encodePayload(msg);
    } catch (error) {
      return Promise.reject(
        new ZLinkError('InvalidArgument', `${what}: msg cannot be encoded: ${String(error)}`),
      );
    }
    return this.relayTo(binding, options.kind ?? 'request', packet, payload, options.timeoutMs);
  }

  /** One message on the binding's stored route, stamped with this session and its sequence number. */
  private relayTo(
    binding: BindingRoute,
    kind: MessageKind,
    packet: string,
    payload: Uint8Array,
    timeoutMs = this.runner.timeoutMs,
  ): Promise<unknown> {
    const objects = this.runner.objects(`relay ${packet}`);
    if (binding.lost !== undefined)
      return Promise.reject(lostError(`relay ${packet} to actor '${binding.actorId}'`, binding.lost));
    const stamp = {
      ownerRid: objects.self.rid,
      ownerGeneration: objects.self.nodeGeneration,
      listener: this.listener,
      sessionId: this.id,
      bindingGeneration: binding.bindingGeneration,
      sequence: ++this.sequence,
    };
    const sub: ObjectSubmission = {
      messageKind: kind,
      objectKind: 'actor',
      id: binding.actorId,
      packet,
      metadata: undefined,
      payload,
      trace: undefined,
      timeoutMs,
      signal: undefined,
      session: { stamp, bytes: packSessionStamp(stamp) },
    };
    // Sealed for a move (docs/protocol.md#bound-actors-that-move): held here, in session order, until the
    // move gives the route.
    const held = this.bindings.held(binding.actorId);
    if (held !== undefined) return new Promise((resolve, reject) => held.push({ sub, resolve, reject }));
    return this.runner.submit(binding.route, sub).catch((error: unknown) => {
      this.endedBy(error, binding);
      throw error;
    });
  }

  /**
   * A relay refused because its binding ended with its incarnation (the Actor was destroyed, maybe
   * created again): the binding is lost, so the relays after it end at once with the same words
   * instead of reaching an incarnation nobody bound; told once (`unbound`, `bindingEnded`).
   */
  private endedBy(error: unknown, binding: BindingRoute): void {
    if (!(error instanceof ZLinkError)) return;
    if ((error.details as { reason?: unknown } | undefined)?.reason !== 'bindingEnded') return;
    const { actorId, bindingGeneration } = binding;
    const detail = error.remote?.message ?? error.message;
    if (this.bindings.lose(actorId, { reason: 'bindingEnded', detail }, bindingGeneration))
      this.runner.unbound(this, 'bindingEnded', detail);
  }

  /**
   * The seal of `actorId` ends: its held relays go, in order, on the binding's route now (the new one
   * after a commit, the old one after an abort).
   */
  released(actorId: string): void {
    const binding = this.bindings.get(actorId);
    const held = this.bindings.unseal(actorId);
    if (binding === undefined) return;
    const objects = this.runner.objects(`relay to actor '${actorId}'`);
    for (const h of held) objects.callOnRoute(binding.route, h.sub).then(h.resolve, h.reject);
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
    this.queue.push({ kind, correlation, packet, payload });
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let work = this.queue.shift(); work !== undefined; work = this.queue.shift()) {
        if (!this.open) {
          this.queue.length = 0;
          break;
        }
        await this.turn(work);
      }
    } finally {
      this.running = false;
    }
  }

  /** One frame: its `@SessionHandler`, else a relay to the primary Actor; answered once; never throws. */
  private async turn(work: SessionWork): Promise<void> {
    const { kind, correlation, packet } = work;
    const handler = this.runner.handler(this.listener, kind, packet);
    if (!handler) {
      const primary = this.bindings.primary;
      if (primary !== undefined) return this.relayFrame(primary, work);
      this.runner.failed(this.listener, 'no_handler', packet);
      if (kind === 'request')
        this.fail(correlation, REMOTE_CODES.noHandler, `no handler for '${packet}' on this session`);
      return;
    }
    const decoded = decodePayload(work.payload);
    if (!decoded.ok) {
      this.runner.failed(this.listener, 'decode_error', packet);
      if (kind === 'request') this.fail(correlation, REMOTE_CODES.decodeError, decoded.reason);
      return;
    }
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
      const result = await this.runner.run(handler, decoded.value, context);
      if (kind === 'request') this.answer(correlation, encodePayload(result));
    } catch (error) {
      this.runner.failed(this.listener, 'handler_error', packet);
      const wire = toWireError(error);
      if (kind === 'request') this.fail(correlation, wire.code, wire.message, wire.details);
    }
  }

  /**
   * A client frame for the primary Actor, its payload's bytes as they came: a request answered with
   * the Actor's reply (or the call's error code), a send done once handed over. The turn does not wait
   * for either, so the next frame is relayed right behind it, in the same batch.
   */
  private async relayFrame(binding: BindingRoute, work: SessionWork): Promise<void> {
    const relayed = this.relayTo(binding, work.kind, work.packet, work.payload);
    if (work.kind === 'send') {
      // Sends are handed over in the node's next relay batch; the turn waits for that only when
      // `maxInFlight` of them are still on their way (a client outrunning its Actor's link is held
      // here, and its frames wait in the queue, which closes the session when full).
      this.handing++;
      const handed = relayed.then(this.sendHanded, (): void => {
        this.sendHanded();
        this.runner.failed(this.listener, 'rejected', work.packet);
      });
      if (this.handing >= this.maxInFlight) await handed;
      return;
    }
    relayed.then(
      (value) => this.answer(work.correlation, encodePayload(value)),
      (error: unknown) => {
        const wire = toWireError(error);
        this.fail(work.correlation, wire.code, wire.message, wire.details);
      },
    );
  }
}
