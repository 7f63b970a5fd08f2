import { ZLinkError, toWireError } from '../../core/errors.js';
import { encodePayload } from '../../core/wire/index.js';
import type { MessageKind } from '../../core/calls/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import type { ZLinkRelayOptions, ZLinkSession } from '../../core/objects/index.js';
import type { ObjectSubmission } from '../caller/index.js';
import { type SessionStamp, packStampHead, stampWithSequence } from '../wire/index.js';
import { type BindingRoute, type SessionBindings, lostError } from './session-bindings.js';
import type { SessionRunner } from './session-runner.js';

/** One frame of a session waiting for its turn. */
export interface SessionWork {
  readonly kind: MessageKind;
  /** The client's correlation (requests); 0 for a send. */
  readonly correlation: number;
  readonly packet: string;
  readonly payload: Uint8Array;
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
  /**
   * The stamp head of the binding relayed on last, for this node run: every relay of a binding stamps
   * the same five items, and most sessions relay on one binding.
   */
  private head:
    { readonly binding: BindingRoute; readonly self: NodeRun; readonly bytes: Uint8Array } | undefined;
  private readonly sendHanded = (): void => {
    this.handing--;
  };

  constructor(
    private readonly session: RelayingSession,
    private readonly runner: SessionRunner,
    private readonly maxInFlight: number,
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
    return this.relayTo(binding, options.kind ?? 'request', packet, payload, false, options.timeoutMs);
  }

  /**
   * One message on the binding's stored route, stamped with this session and its sequence number; a
   * request resolves with the reply's value, or with its msgpack bytes when `rawReply`.
   */
  private relayTo(
    binding: BindingRoute,
    kind: MessageKind,
    packet: string,
    payload: Uint8Array,
    rawReply: boolean,
    timeoutMs = this.runner.timeoutMs,
  ): Promise<unknown> {
    const objects = this.runner.objects(`relay ${packet}`);
    if (binding.lost !== undefined)
      return Promise.reject(lostError(`relay ${packet} to actor '${binding.actorId}'`, binding.lost));
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
    if (held !== undefined) return new Promise((resolve, reject) => held.push({ sub, resolve, reject }));
    return this.runner.submit(binding.route, sub).catch((error: unknown) => {
      this.endedBy(error, binding);
      throw error;
    });
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
    const objects = this.runner.objects(`relay to actor '${actorId}'`);
    for (const h of held) objects.callOnRoute(binding.route, h.sub).then(h.resolve, h.reject);
  }

  /**
   * A client frame for the primary Actor, its payload's bytes as they came: a request answered with
   * the Actor's reply (or the call's error code), a send done once handed over. The turn does not wait
   * for either, so the next frame is relayed right behind it, in the same batch.
   */
  async relayFrame(binding: BindingRoute, work: SessionWork): Promise<void> {
    const relayed = this.relayTo(binding, work.kind, work.packet, work.payload, true);
    if (work.kind === 'send') {
      // Sends are handed over in the node's next relay batch; the turn waits for that only when
      // `maxInFlight` of them are still on their way (a client outrunning its Actor's link is held
      // here, and its frames wait in the queue, which closes the session when full).
      this.handing++;
      const handed = relayed.then(this.sendHanded, (): void => {
        this.sendHanded();
        this.runner.failed(this.session.listener, 'rejected', work.packet);
      });
      if (this.handing >= this.maxInFlight) await handed;
      return;
    }
    // The reply's bytes as the Actor's node encoded them: the client reads the value, not this node.
    relayed.then(
      (bytes) => this.session.answer(work.correlation, bytes as Uint8Array),
      (error: unknown) => {
        const wire = toWireError(error);
        this.session.fail(work.correlation, wire.code, wire.message, wire.details);
      },
    );
  }
}
