import { invalidArgument } from '../core/errors.js';

/** Options of a publish's `.async()`. */
export interface PublishOptions {
  /** How long a publish may wait for local queue space (noDrop); defaults to `requestTimeoutMs`. */
  timeoutMs?: number;
  /** Aborting ends a waiting publish with `Cancelled`. */
  signal?: AbortSignal;
}

/** What a publish hands to the runtime. */
export interface PublishCall {
  readonly channel: string;
  readonly packet: string;
  readonly event: unknown;
  readonly topic: string | Uint8Array | undefined;
  readonly timeoutMs: number | undefined;
  readonly signal: AbortSignal | undefined;
}

export interface FanoutSubmitter {
  publish(call: PublishCall): Promise<void>;
}

/**
 * A classic fanout publish (docs/protocol.md#classic-fanout): `.async()` only — there is no metadata on
 * fanout, neither in the types nor at run time. Nothing happens until `.async()`.
 */
export class ZLinkFanoutPublishCall {
  constructor(
    private readonly submitter: FanoutSubmitter,
    private readonly call: Omit<PublishCall, 'timeoutMs' | 'signal'>,
  ) {}

  /**
   * Resolves when the local publisher queue took the event — no subscriber count, no receipt
   * (docs/protocol.md#when-a-call-is-finished). Ends `NotFound` (no such fanout channel), `NotConfigured` (no
   * publisher here), `Unavailable` (the runtime has not started), `InvalidArgument` (bad topic, the reserved
   * one included, or an event that cannot be encoded), `Timeout` (noDrop: the queue did not clear by the
   * deadline), `Cancelled` or `Shutdown`.
   */
  async(options?: PublishOptions): Promise<void> {
    return this.submitter.publish({ ...this.call, timeoutMs: options?.timeoutMs, signal: options?.signal });
  }
}

/** Publishes on classic fanout channels (injectable in Nest). */
export class ZLinkFanoutClient {
  constructor(private readonly submitter: FanoutSubmitter) {}

  /** `topic` defaults to the packet name; a string is sent as its UTF-8 bytes. */
  publish(
    channel: string,
    packet: string,
    event: unknown,
    options?: { topic?: string | Uint8Array },
  ): ZLinkFanoutPublishCall {
    if (typeof channel !== 'string' || channel.length === 0)
      throw invalidArgument('channel', `must be a non-empty string, got ${String(channel)}`);
    if (typeof packet !== 'string' || packet.length === 0)
      throw invalidArgument('packet', `must be a non-empty string, got ${String(packet)}`);
    return new ZLinkFanoutPublishCall(this.submitter, { channel, packet, event, topic: options?.topic });
  }
}
