import { ZLinkError, toWireError } from '../../core/errors.js';
import { encodePayload } from '../../core/wire/index.js';
import type { CallSink, MessageKind } from '../../core/calls/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import type { ZLinkRelayOptions, ZLinkSession } from '../../core/objects/index.js';
import type { ObjectSubmission } from '../caller/index.js';
import { type SessionStamp, packStampHead, stampWithSequence } from '../wire/index.js';
import { type BindingRoute, type SessionBindings, lostError } from './session-bindings.js';
import type { SessionObjects } from './session-objects.js';
import type { SessionRunner } from './session-runner.js';

/**
 * One frame of a session waiting for its turn. Relayed to the primary Actor, it is also where its
 * call ends (`CallSink`): no promise and no closure per relayed frame.
 */
export class SessionFrame implements CallSink {
  /** The binding it was relayed on (for `endedBy`); set by `relayFrame`. */
  binding: BindingRoute | undefined = undefined;
  /** Its relay ended: a request answered, a send handed over or refused. */
  done = false;

  constructor(
    private readonly relays: SessionRelays,
    readonly kind: MessageKind,
    /** The client's correlation (requests); 0 for a send. */
    readonly correlation: number,
    readonly packet: string,
    readonly payload: Uint8Array,
  ) {}

  /** The Actor's reply (its msgpack bytes: the relay asks for them raw), or a send handed over. */
  resolve(value: unknown): void {
    this.done = true;
    this.relays.frameDone(this, value);
  }

  reject(error: unknown): void {
    this.done = true;
    this.relays.frameFailed(this, error);
  }
}

/** What a session's relays need of their session. */
export interface RelayingSession extends ZLinkSession {
  readonly bindings: SessionBindings;
  /** Answers request `correlation` with a payload, once. */
  answer(correlation: number, payload: Uint8Array): boolean;
  /** Answers request `correlation` with an error, once. */
  fail(correlation: number, code: string, message: string, details?: unknown): boolean;
}

/**
 * The relays of one session to its bound Actors (docs/sessions.md): each message stamped with the
 * session and its sequence number and sent on its binding's stored route, held in session order while
 * the binding is sealed for a move.
 */
export class SessionRelays {
  /** The session sequence: one number per message relayed, in the order the session accepted them. */
  private sequence = 0;
  /** Sends relayed and not yet handed to their route (see `relayFrame`). */
  private handing = 0;
  /** The send whose turn waits until it is handed over (see `relayFrame`). */
  private holding: SessionFrame | undefined;
  /**
   * The stamp head of the binding relayed on last, for this node run: every relay of a binding stamps
   * the same five items, and most sessions relay on one binding.
   */
  private head:
    { readonly binding: BindingRoute; readonly self: NodeRun; readonly bytes: Uint8Array } | undefined;

  constructor(
    private readonly session: RelayingSession,
    private readonly runner: SessionRunner,
    private readonly maxInFlight: number,
    /** Lets the session's next frame take its turn, after `relayFrame` held it back. */
    private readonly unblocked: () => void,
  ) {}

  /** `ZLinkSession.relay`: `msg` to the primary Actor, or the one `options.actor` names. */
  relay(packet: string, msg: unknown, options: ZLinkRelayOptions = {}): Promise<unknown> {
    const { bindings } = this.session;
    const what = `relay ${packet} from session '${this.session.id}'`;
    const binding = options.actor === undefined ? bindings.primary : bindings.get(options.actor);
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
    return new Promise((resolve, reject) => {
      const sink: CallSink = {
        resolve,
        reject: (error: unknown) => {
          this.endedBy(error, binding);
          reject(error);
        },
      };
      this.relayTo(binding, options.kind ?? 'request', packet, payload, false, sink, options.timeoutMs);
    });
  }

  /**
   * One message on the binding's stored route, stamped with this session and its sequence number; its
   * end goes to `sink`, once: a request's reply value, or its msgpack bytes when `rawReply`. Never throws.
   */
  private relayTo(
    binding: BindingRoute,
    kind: MessageKind,
    packet: string,
    payload: Uint8Array,
    rawReply: boolean,
    sink: CallSink,
    timeoutMs = this.runner.timeoutMs,
  ): void {
    let objects: SessionObjects;
    try {
      objects = this.runner.objects(`relay ${packet}`);
    } catch (error) {
      return sink.reject(error);
    }
    if (binding.lost !== undefined)
      return sink.reject(lostError(`relay ${packet} to actor '${binding.actorId}'`, binding.lost));
    const { self } = objects;
    const stamp = {
      ownerRid: self.rid,
      ownerGeneration: self.nodeGeneration,
      listener: this.session.listener,
      sessionId: this.session.id,
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
      rawReply,
      session: { stamp, bytes: stampWithSequence(this.headOf(binding, self, stamp), stamp.sequence) },
    };
    // Sealed for a move (docs/protocol.md#bound-actors-that-move): held here, in session order, until the
    // move gives the route.
    const held = this.session.bindings.held(binding.actorId);
    if (held !== undefined) held.push({ sub, sink });
    else this.runner.submit(binding.route, sub, sink);
  }

  /** The stamp head of `binding` (`packStampHead`), packed at its first relay. */
  private headOf(binding: BindingRoute, self: NodeRun, stamp: SessionStamp): Uint8Array {
    const last = this.head;
    if (last !== undefined && last.binding === binding && last.self === self) return last.bytes;
    const bytes = packStampHead(stamp);
    this.head = { binding, self, bytes };
    return bytes;
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
    if (this.session.bindings.lose(actorId, { reason: 'bindingEnded', detail }, bindingGeneration))
      this.runner.unbound(this.session, 'bindingEnded', detail);
  }

  /**
   * The seal of `actorId` ends: its held relays go, in order, on the binding's route now (the new one
   * after a commit, the old one after an abort).
   */
  released(actorId: string): void {
    const binding = this.session.bindings.get(actorId);
    const held = this.session.bindings.unseal(actorId);
    if (binding === undefined) return;
    let objects: SessionObjects;
    try {
      objects = this.runner.objects(`relay to actor '${actorId}'`);
    } catch (error) {
      for (const h of held) h.sink.reject(error);
      return;
    }
    for (const h of held) objects.callOnRoute(binding.route, h.sub, h.sink);
  }

  /**
   * A client frame for the primary Actor, its payload's bytes as they came: a request answered with
   * the Actor's reply (or the call's error code), a send done once handed over. The turn does not wait
   * for either, so the next frame is relayed right behind it, in the same batch. Returns whether the
   * session's next frame waits: sends are handed over in the node's next relay batch, and the turn
   * waits for that only when `maxInFlight` of them are still on their way (a client outrunning its
   * Actor's link is held here, and its frames wait in the queue, which closes the session when full);
   * `unblocked` then lets it go.
   */
  relayFrame(binding: BindingRoute, frame: SessionFrame): boolean {
    frame.binding = binding;
    const send = frame.kind === 'send';
    if (send) this.handing++;
    this.relayTo(binding, frame.kind, frame.packet, frame.payload, !send, frame);
    if (!send || frame.done || this.handing < this.maxInFlight) return false;
    this.holding = frame;
    return true;
  }

  /**
   * A relayed frame's end (`SessionFrame`), once: a request answered with the reply's bytes as the
   * Actor's node encoded them (the client reads the value, not this node), a send handed over.
   */
  frameDone(frame: SessionFrame, bytes: unknown): void {
    if (frame.kind === 'request') this.session.answer(frame.correlation, bytes as Uint8Array);
    else this.handed(frame);
  }

  /** A relayed frame's end in an error (`SessionFrame`), once: the request answered with its code. */
  frameFailed(frame: SessionFrame, error: unknown): void {
    this.endedBy(error, frame.binding as BindingRoute);
    if (frame.kind === 'request') {
      const wire = toWireError(error);
      this.session.fail(frame.correlation, wire.code, wire.message, wire.details);
      return;
    }
    this.runner.failed(this.session.listener, 'rejected', frame.packet);
    this.handed(frame);
  }

  private handed(frame: SessionFrame): void {
    this.handing--;
    if (frame !== this.holding) return;
    this.holding = undefined;
    // Not from inside the batch that handed it over: the next frames join the batch after it.
    queueMicrotask(this.unblocked);
  }
}
