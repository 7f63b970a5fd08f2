import { MetadataBuilder } from '../core/index.js';

/** Per-call options of `.async()`. */
export interface CallOptions {
  /** Deadline of this call; defaults to the runtime's `requestTimeoutMs`. */
  timeoutMs?: number;
  /** Aborting ends the call with `Cancelled` (a request still pending, or a send still waiting for queue space). */
  signal?: AbortSignal;
}

/** What a call hands to the runtime when `.async()` runs. Metadata is already encoded, once. */
export interface CallSubmission {
  readonly kind: 'send' | 'request';
  readonly channel: string;
  readonly packet: string;
  readonly message: unknown;
  readonly metadata: Uint8Array | undefined;
  readonly options: CallOptions | undefined;
}

export interface CallSubmitter {
  submit(call: CallSubmission): Promise<unknown>;
}

abstract class MetadataCall<TSelf> {
  private readonly meta = new MetadataBuilder();

  constructor(
    protected readonly submitter: CallSubmitter,
    protected readonly channel: string,
    protected readonly packet: string,
    protected readonly message: unknown,
  ) {}

  /** Adds one metadata pair; setting a key again replaces its value (the last value wins). */
  metadata(key: string, value: string): TSelf;
  /** Adds every pair of the record. */
  metadata(record: Readonly<Record<string, string>>): TSelf;
  metadata(keyOrRecord: string | Readonly<Record<string, string>>, value?: string): TSelf {
    if (typeof keyOrRecord === 'string') this.meta.set(keyOrRecord, value as string);
    else this.meta.setAll(keyOrRecord);
    return this as unknown as TSelf;
  }

  protected run(kind: 'send' | 'request', options: CallOptions | undefined): Promise<unknown> {
    let metadata: Uint8Array | undefined;
    try {
      metadata = this.meta.encode();
    } catch (error) {
      // Bad metadata is refused here, before anything is selected or sent.
      return Promise.reject(error);
    }
    return this.submitter.submit({
      kind,
      channel: this.channel,
      packet: this.packet,
      message: this.message,
      metadata,
      options,
    });
  }
}

/** A one-way send. Nothing happens until `.async()`. */
export class ZLinkSendCall extends MetadataCall<ZLinkSendCall> {
  /**
   * Selects a target and submits. Resolves when the chosen connection's source-local queue accepted
   * the record (no delivery guarantee). Ends with `NotFound`, `NotConfigured`, `Unavailable`,
   * `Timeout` (queue full past the deadline, or no ready server in time), `Cancelled`,
   * `InvalidArgument` (metadata) or `Shutdown`. Never retries on another server.
   */
  async(options?: CallOptions): Promise<void> {
    return this.run('send', options) as Promise<void>;
  }
}

/** A request. Nothing happens until `.async()`. */
export class ZLinkRequestCall extends MetadataCall<ZLinkRequestCall> {
  /**
   * Selects a target, submits, and resolves with the handler's reply. Ends exactly once: with the
   * reply, or `RemoteError` (the server's error reply, with its code), `Rejected` (a draining server
   * refused it), `Timeout`, `Cancelled`, `RouteError` (the connection was lost), `NotFound`,
   * `NotConfigured`, `Unavailable`, `InvalidArgument` or `Shutdown`. Never resent to another server.
   */
  async<TReply = unknown>(options?: CallOptions): Promise<TReply> {
    return this.run('request', options) as Promise<TReply>;
  }
}
