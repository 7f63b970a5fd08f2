import {
  EMPTY_METADATA,
  type MessageKind,
  REMOTE_CODES,
  type SessionCloseReason,
  type SessionLink,
  type ZLinkSession,
  type ZLinkSessionContext,
  decodePayload,
  encodePayload,
  toWireError,
} from '../../core/index.js';
import type { SessionRunner } from './session-runner.js';

/** One frame of a session waiting for its turn. */
interface SessionWork {
  readonly kind: MessageKind;
  /** The client's correlation (requests); 0 for a send. */
  readonly correlation: number;
  readonly packet: string;
  readonly payload: Uint8Array;
}

/**
 * A session on its Session owner: the public `ZLinkSession`, and the queue that gives the session
 * one turn at a time, in the order its frames arrived. A request's turn ends when its handler
 * answered; a relay's (see the bindings) when it was handed to its route, so relayed requests still
 * pipeline. At most `maxInFlight` frames wait: one more closes the session (`tooManyInFlight`).
 */
export class OwnedSession implements ZLinkSession {
  readonly data: Record<string, unknown> = {};
  readonly remoteAddress = undefined;
  private readonly queue: SessionWork[] = [];
  private running = false;

  constructor(
    readonly id: string,
    readonly link: SessionLink,
    private readonly runner: SessionRunner,
    private readonly maxInFlight: number,
  ) {}

  get listener(): string {
    return this.link.listener;
  }

  get open(): boolean {
    return this.link.open;
  }

  push(packet: string, msg: unknown): boolean {
    if (!this.link.open) return false;
    return this.link.push(packet, encodePayload(msg));
  }

  close(reason: SessionCloseReason = 'normal', detail = 'closed by the application'): void {
    this.link.close(reason, detail);
  }

  /** A frame of the client's, in arrival order. */
  enqueue(kind: MessageKind, correlation: number, packet: string, payload: Uint8Array): void {
    if (this.queue.length >= this.maxInFlight) {
      this.link.close('tooManyInFlight', `more than ${this.maxInFlight} messages waiting`);
      return;
    }
    this.queue.push({ kind, correlation, packet, payload });
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let work = this.queue.shift(); work !== undefined; work = this.queue.shift()) {
        if (!this.link.open) {
          this.queue.length = 0;
          break;
        }
        await this.turn(work);
      }
    } finally {
      this.running = false;
    }
  }

  /** One frame: its `@SessionHandler`, answered once; never throws. */
  private async turn(work: SessionWork): Promise<void> {
    const { kind, correlation, packet } = work;
    const handler = this.runner.handler(this.listener, kind, packet);
    if (!handler) {
      this.runner.failed(this.listener, 'no_handler', packet);
      if (kind === 'request')
        this.link.error(correlation, REMOTE_CODES.noHandler, `no handler for '${packet}' on this session`);
      return;
    }
    const decoded = decodePayload(work.payload);
    if (!decoded.ok) {
      this.runner.failed(this.listener, 'decode_error', packet);
      if (kind === 'request') this.link.error(correlation, REMOTE_CODES.decodeError, decoded.reason);
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
      if (kind === 'request') this.link.reply(correlation, encodePayload(result));
    } catch (error) {
      this.runner.failed(this.listener, 'handler_error', packet);
      const wire = toWireError(error);
      if (kind === 'request') this.link.error(correlation, wire.code, wire.message);
    }
  }
}
