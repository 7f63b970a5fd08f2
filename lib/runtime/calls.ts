import { invalidArgument } from '../core/errors.js';
import type { ObjectKind } from '../core/kinds.js';
import { MetadataBuilder } from '../core/wire/index.js';
import { packetProblem } from '../core/objects/index.js';

/** Per-call options of `.async()`. */
export interface CallOptions {
  /** Deadline of this call; defaults to the runtime's `requestTimeoutMs`. */
  timeoutMs?: number;
  /**
   * Aborting ends the call with `Cancelled` (a request still pending, or a send still waiting for queue
   * space).
   */
  signal?: AbortSignal;
}

/**
 * Where a call goes: one Server of a ChannelName, chosen by weight (docs/protocol.md#select-one), exactly the
 * MeshNode `rid` of mesh `mesh` (docs/protocol.md#node-direct), or the one Spot or Actor a global id names,
 * wherever it lives (docs/protocol.md#resolving-a-global-id; `instance`: Instance intent, a Missing Spot may
 * be created).
 */
export type CallTarget =
  | { readonly kind: 'channel'; readonly channel: string }
  | { readonly kind: 'node'; readonly mesh: string; readonly rid: string }
  | {
      readonly kind: 'object';
      readonly objectKind: ObjectKind;
      readonly id: string;
      readonly instance?: { readonly type: string; readonly init: unknown };
    };

/**
 * The name a call's messages use for its target: the ChannelName, the MeshName of a Node direct call, the
 * object's id.
 */
export function targetName(target: CallTarget): string {
  return target.kind === 'channel' ? target.channel : target.kind === 'node' ? target.mesh : target.id;
}

/** The argument a target's name comes from, for `InvalidArgument`. */
function targetArgument(target: CallTarget): string {
  return target.kind === 'channel' ? 'channel' : target.kind === 'node' ? 'mesh' : 'id';
}

/** What a call hands to the runtime when `.async()` runs. Metadata is already encoded, once. */
export interface CallSubmission {
  readonly kind: 'send' | 'request';
  readonly target: CallTarget;
  readonly packet: string;
  readonly message: unknown;
  readonly metadata: Uint8Array | undefined;
  readonly options: CallOptions | undefined;
}

export interface CallSubmitter {
  submit(call: CallSubmission): Promise<unknown>;
}

abstract class MetadataCall<TSelf> {
  /** Created on the first `.metadata()`: most calls carry none. */
  private meta: MetadataBuilder | undefined;

  constructor(
    protected readonly submitter: CallSubmitter,
    protected readonly target: CallTarget,
    protected readonly packet: string,
    protected readonly message: unknown,
  ) {}

  /** Adds one metadata pair; setting a key again replaces its value (the last value wins). */
  metadata(key: string, value: string): TSelf;
  /** Adds every pair of the record. */
  metadata(record: Readonly<Record<string, string>>): TSelf;
  metadata(keyOrRecord: string | Readonly<Record<string, string>>, value?: string): TSelf {
    const meta = (this.meta ??= new MetadataBuilder());
    if (typeof keyOrRecord === 'string') meta.set(keyOrRecord, value as string);
    else meta.setAll(keyOrRecord);
    return this as unknown as TSelf;
  }

  protected run(kind: 'send' | 'request', options: CallOptions | undefined): Promise<unknown> {
    let metadata: Uint8Array | undefined;
    try {
      const { target } = this;
      const name: unknown = targetName(target);
      if (typeof name !== 'string' || name.length === 0) {
        throw invalidArgument(targetArgument(target), `must be a non-empty string, got ${String(name)}`);
      }
      const rid: unknown = target.kind === 'node' ? target.rid : undefined;
      if (target.kind === 'node' && (typeof rid !== 'string' || rid.length === 0)) {
        // From JavaScript, a missing NodeRid is refused here (it used to turn the call into a channel call).
        throw invalidArgument('rid', `must be a non-empty NodeRid, got ${String(rid)}`);
      }
      // Only an object's packets are reserved under the runtime's prefix: a channel's are the application's.
      const problem = packetProblem(this.packet, target.kind === 'object');
      if (problem !== undefined) throw invalidArgument('packet', problem);
      metadata = this.meta?.encode();
    } catch (error) {
      // Bad arguments are refused here, before anything is selected or sent.
      return Promise.reject(error);
    }
    return this.submitter.submit({
      kind,
      target: this.target,
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
   * the record (no delivery guarantee). Otherwise ends with `NotFound` (no such channel; ClientServer:
   * no ready server within min(timeout, 5 s); RouteMesh: no peer serves it, at once; Node direct: no
   * such member), `Unavailable` (servers exist but all have weight 0 or drain, or the runtime has not
   * started), `NotConfigured` (no Client role here), `Timeout` (the queue
   * stayed full until the deadline), `RouteError` (the chosen connection was lost before the record
   * was queued), `Cancelled`, `InvalidArgument` (channel, packet, payload or metadata) or
   * `Shutdown`. Never retries on another server.
   */
  async(options?: CallOptions): Promise<void> {
    return this.run('send', options) as Promise<void>;
  }
}

/** A request. Nothing happens until `.async()`. */
export class ZLinkRequestCall extends MetadataCall<ZLinkRequestCall> {
  /**
   * Selects a target, submits, and resolves with the handler's reply. Ends exactly once: with the
   * reply, or `RemoteError` (the server's error reply; `error.remote.code` says why), `Rejected` (a
   * draining server refused it; it never ran), `Timeout`, `Cancelled`, `RouteError` (the connection
   * was lost; it may have run), `NotFound`, `NotConfigured`, `Unavailable`, `InvalidArgument` or
   * `Shutdown` — the same conditions as a send, plus the reply. Never resent to another server.
   */
  async<TReply = unknown>(options?: CallOptions): Promise<TReply> {
    return this.run('request', options) as Promise<TReply>;
  }
}
