import { type WireError, REMOTE_CODES, errorMessage, toWireError } from '../../core/errors.js';
import {
  type TraceFields,
  type TracePropagation,
  type ZLinkMetadata,
  decodeMetadata,
  decodePayload,
  encodeErrorReply,
  encodePayload,
  encodeReply,
} from '../../core/wire/index.js';
import {
  type DeliveryResult,
  type HandlerMetrics,
  LATENCY_SAMPLE_WEIGHT,
  type RouteKind,
  type ZLinkEvents,
} from '../../core/observe/index.js';
import {
  type ChannelHandlerRegistry,
  type MessageKind,
  type NodeHandlerRegistry,
  type ZLinkMessageContext,
  type ZLinkNodeMessageContext,
  isThenable,
} from '../../core/calls/index.js';

/** The fields of a received send or request that running its handler needs. */
export interface InboundMessage {
  readonly packet: string;
  readonly metadata: Uint8Array | undefined;
  readonly payload: Uint8Array;
  /** The trace context the record carried (a framework field, never metadata). */
  readonly trace?: TraceFields | undefined;
}

/**
 * Where received business records are handled: a ClientServer listener's channel, a RouteMesh
 * channel membership, or a MeshNode's Node direct namespace. One long-lived object per scope, so
 * running a message allocates nothing for it.
 */
export interface InboundScope<C, M extends InboundMessage = InboundMessage> {
  readonly route: RouteKind;
  readonly events: ZLinkEvents;
  /** Names the scope in events and messages. */
  readonly channel: string | undefined;
  readonly mesh: string | undefined;
  lookup(
    kind: MessageKind,
    packet: string,
  ): { readonly handler: (payload: unknown, context: C) => unknown } | undefined;
  context(
    kind: MessageKind,
    packet: string,
    metadata: ZLinkMetadata,
    correlation: number | undefined,
    source: Buffer,
    message: M,
  ): C;
  /** Queues a reply (or error reply) toward `source`; replies are never refused by a queue bound. */
  reply(source: Buffer, record: Uint8Array): void;
  /** Set when OpenTelemetry is loaded: a handler of a traced record runs inside its trace context. */
  readonly tracing?: TracePropagation | undefined;
  /** This scope's counters (`events.metrics.scope(...)`), taken once when the scope is built. */
  readonly metrics: HandlerMetrics;
}

/** The scope of one ChannelName served here, over ClientServer or as a RouteMesh Server membership. */
export function channelScope(
  route: RouteKind,
  events: ZLinkEvents,
  channel: string,
  mesh: string | undefined,
  handlers: ChannelHandlerRegistry,
  reply: (source: Buffer, record: Uint8Array) => void,
): InboundScope<ZLinkMessageContext> {
  return {
    route,
    events,
    channel,
    mesh,
    metrics: events.metrics.scope(route, channel, mesh).handlers,
    lookup: (kind, packet) => handlers.lookup(channel, kind, packet),
    context: (kind, packet, metadata, correlation) => ({
      target: 'channel',
      channelName: channel,
      kind,
      packet,
      metadata,
      correlation,
    }),
    reply,
  };
}

/**
 * The scope of a MeshNode's Node direct namespace: no ChannelName (none was called); the context
 * names the mesh and the node that sent the record (`sourceRid` finds it behind the pipe).
 */
export function nodeScope(
  events: ZLinkEvents,
  mesh: string,
  handlers: NodeHandlerRegistry,
  sourceRid: (source: Buffer) => string,
  reply: (source: Buffer, record: Uint8Array) => void,
): InboundScope<ZLinkNodeMessageContext> {
  return {
    route: 'route-mesh',
    events,
    channel: undefined,
    mesh,
    metrics: events.metrics.scope('route-mesh', undefined, mesh).handlers,
    lookup: (kind, packet) => handlers.lookup(mesh, kind, packet),
    context: (kind, packet, metadata, correlation, source) => ({
      target: 'node',
      meshName: mesh,
      sourceRid: sourceRid(source),
      kind,
      packet,
      metadata,
      correlation,
    }),
    reply,
  };
}

type Failure = Exclude<DeliveryResult, 'ok' | 'drop'>;

/**
 * Runs one received send (`correlation` undefined) or request through its handler and answers a
 * request exactly once: the reply, or an error reply for bad metadata, no handler, an undecodable
 * payload, a thrown error or an unencodable result. A failed send is reported, never answered.
 * A handler that answers with a plain value is answered in this same call, which returns
 * `undefined`; one that returns a promise gets a promise that settles once it is answered. Never
 * throws, and that promise never rejects; the caller releases the job permit when it is done.
 */
export function runInbound<C, M extends InboundMessage>(
  scope: InboundScope<C, M>,
  source: Buffer,
  correlation: number | undefined,
  message: M,
): Promise<void> | undefined {
  try {
    const metadata = decodeMetadata(message.metadata);
    if (!metadata.ok) {
      failInbound(scope, source, correlation, message, 'protocol_error', {
        code: REMOTE_CODES.badMetadata,
        message: metadata.reason,
      });
      return undefined;
    }
    const kind: MessageKind = correlation === undefined ? 'send' : 'request';
    const registration = scope.lookup(kind, message.packet);
    if (!registration) {
      const where = scope.channel !== undefined ? `'${scope.channel}'` : `node '${String(scope.mesh)}'`;
      failInbound(scope, source, correlation, message, 'no_handler', {
        code: REMOTE_CODES.noHandler,
        message: `no ${kind} handler for '${message.packet}' on ${where}`,
      });
      return undefined;
    }
    const payload = decodePayload(message.payload);
    if (!payload.ok) {
      failInbound(scope, source, correlation, message, 'decode_error', {
        code: REMOTE_CODES.decodeError,
        message: payload.reason,
      });
      return undefined;
    }
    const context = scope.context(kind, message.packet, metadata.metadata, correlation, source, message);
    let result: unknown;
    // Sampled (see LATENCY_SAMPLE_WEIGHT): -1 means this run is not timed.
    const started = scope.metrics.duration.sample() ? performance.now() : -1;
    try {
      const { trace } = message;
      result =
        trace === undefined || scope.tracing === undefined
          ? registration.handler(payload.value, context)
          : scope.tracing.run(trace, () => registration.handler(payload.value, context));
    } catch (error) {
      timed(scope.metrics, started);
      failInbound(scope, source, correlation, message, 'handler_error', toWireError(error));
      return undefined;
    }
    // Only a handler that is not done yet costs a promise (and its job permit waits for it).
    if (isThenable(result)) return answerLater(scope, source, correlation, message, result, started);
    answer(scope, source, correlation, message, result, started);
  } catch (error) {
    unexpected(scope, source, correlation, message, error);
  }
  return undefined;
}

/** `runInbound` for a handler that returned a promise: answers once it settles. Never rejects. */
async function answerLater<C, M extends InboundMessage>(
  scope: InboundScope<C, M>,
  source: Buffer,
  correlation: number | undefined,
  message: M,
  pending: PromiseLike<unknown>,
  started: number,
): Promise<void> {
  let result: unknown;
  try {
    result = await pending;
  } catch (error) {
    timed(scope.metrics, started);
    return failInbound(scope, source, correlation, message, 'handler_error', toWireError(error));
  }
  try {
    answer(scope, source, correlation, message, result, started);
  } catch (error) {
    unexpected(scope, source, correlation, message, error);
  }
}

/** The handler's result: a reply for a request (or an error reply if it cannot be encoded), counted. */
function answer<C, M extends InboundMessage>(
  scope: InboundScope<C, M>,
  source: Buffer,
  correlation: number | undefined,
  message: M,
  result: unknown,
  started: number,
): void {
  timed(scope.metrics, started);
  if (correlation === undefined) return delivered(scope, undefined, message);
  let bytes: Uint8Array;
  try {
    bytes = encodeReply(correlation, encodePayload(result));
  } catch (error) {
    return failInbound(scope, source, correlation, message, 'reply_error', {
      code: REMOTE_CODES.handlerError,
      message: `reply could not be encoded: ${(error as Error).message}`,
    });
  }
  scope.reply(source, bytes);
  delivered(scope, correlation, message);
}

/**
 * Nothing in `runInbound` should throw; if something does, the request still ends once and the
 * process does not die of an unhandled rejection.
 */
function unexpected<C, M extends InboundMessage>(
  scope: InboundScope<C, M>,
  source: Buffer,
  correlation: number | undefined,
  message: M,
  error: unknown,
): void {
  failInbound(scope, source, correlation, message, 'handler_error', {
    code: REMOTE_CODES.handlerError,
    message: errorMessage(error),
  });
}

function timed(metrics: HandlerMetrics, started: number): void {
  if (started >= 0) metrics.duration.observe(performance.now() - started, LATENCY_SAMPLE_WEIGHT);
}

/** Counted always; an event only while someone listens for per-message events. */
function delivered<C, M extends InboundMessage>(
  scope: InboundScope<C, M>,
  correlation: number | undefined,
  message: InboundMessage,
): void {
  scope.metrics.ok++;
  if (!scope.events.perMessage) return;
  scope.events.emit({
    type: 'delivery',
    result: 'ok',
    route: scope.route,
    ...(scope.channel !== undefined && { channel: scope.channel }),
    ...(scope.mesh !== undefined && { mesh: scope.mesh }),
    kind: correlation === undefined ? 'send' : 'request',
    packet: message.packet,
  });
}

/** A request gets an error reply; a one-way send is dropped. Either way it is reported. */
export function failInbound<C, M extends InboundMessage>(
  scope: InboundScope<C, M>,
  source: Buffer,
  correlation: number | undefined,
  message: { readonly packet: string },
  result: Failure,
  error: WireError,
): void {
  if (correlation !== undefined) scope.reply(source, encodeErrorReply(correlation, error));
  scope.events.emit({
    type: 'delivery',
    result,
    route: scope.route,
    ...(scope.channel !== undefined && { channel: scope.channel }),
    ...(scope.mesh !== undefined && { mesh: scope.mesh }),
    kind: correlation === undefined ? 'send' : 'request',
    packet: message.packet,
    reason: error.message,
  });
}
