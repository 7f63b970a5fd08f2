import { BaseRpcContext } from '@nestjs/microservices';
import { invalidArgument } from '../../core/errors.js';
import type { ZLinkMetadata } from '../../core/wire/index.js';
import type { ZLinkEvent, ZLinkEventType } from '../../core/observe/index.js';
import type { MessageKind, ZLinkMessageContext } from '../../core/calls/index.js';
import type { ZLinkRuntime } from '../../runtime/index.js';

/**
 * What `@Ctx()` gives a `@MessagePattern` / `@EventPattern` handler served by `ZLinkServer`: a Nest
 * RPC context (`getArgs()`, `getPattern()`, `getMetadata()` like `TcpContext`) that is also the
 * `ZLinkMessageContext` a `@ChannelHandler` gets, so code written for either reads it. The two
 * metadata readers keep their own contracts: `metadata` (ZLink's) is always a frozen snapshot, empty
 * when the caller set none; `getMetadata()` (Nest's) is `undefined` then, as on `TcpContext` and
 * `RedisContext`, and otherwise that same snapshot.
 */
export class ZLinkRpcContext extends BaseRpcContext<[ZLinkMessageContext]> implements ZLinkMessageContext {
  constructor(message: ZLinkMessageContext) {
    super([message]);
  }

  /** The kind of target the handler serves: `'channel'`. */
  get target(): 'channel' {
    return this.args[0].target;
  }

  get channelName(): string {
    return this.args[0].channelName;
  }

  get kind(): MessageKind {
    return this.args[0].kind;
  }

  get packet(): string {
    return this.args[0].packet;
  }

  /** Frozen snapshot; copy it to keep it past the handler's turn. */
  get metadata(): ZLinkMetadata {
    return this.args[0].metadata;
  }

  /** Request correlation; `undefined` for an event (a one-way send). */
  get correlation(): number | undefined {
    return this.args[0].correlation;
  }

  /** The ZLink context as the runtime passed it. */
  getMessageContext(): ZLinkMessageContext {
    return this.args[0];
  }

  /** The pattern the message was sent with. */
  getPattern(): { channel: string; packet: string } {
    return { channel: this.args[0].channelName, packet: this.args[0].packet };
  }

  /**
   * The caller's metadata (a Nest client's `setOnDispatchHook` sets it as `packet.metadata`; a
   * `ZLinkRouteClient` caller with `.metadata()`), as Nest's contexts return it: `undefined` when the
   * message carried none (an empty record travels as none), otherwise the frozen snapshot `metadata` is.
   */
  getMetadata(): ZLinkMetadata | undefined {
    const metadata = this.args[0].metadata;
    // One key is enough to tell; no array of keys per call.
    for (const _key in metadata) return metadata;
    return undefined;
  }
}

/**
 * `on(type, listener)` of `ZLinkServer` and `ZLinkClientProxy`: the runtime's observability events by type.
 */
export type ZLinkEventsMap = {
  [K in ZLinkEventType]: (event: Extract<ZLinkEvent, { readonly type: K }>) => void;
};

/** Subscribes `listener` to the runtime events of one `type`; returns the unsubscribe function. */
export function onRuntimeEvent(runtime: ZLinkRuntime, type: unknown, listener: unknown): () => void {
  if (typeof listener !== 'function') throw invalidArgument('listener', 'must be a function');
  const call = listener as (event: ZLinkEvent) => void;
  // Only the per-message types make the message path build events for this listener.
  const perMessage = type === 'selection' || type === 'delivery';
  return runtime.events.subscribe(
    (event) => {
      if (event.type === type) call(event);
    },
    { perMessage },
  );
}
