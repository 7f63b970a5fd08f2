import { runtimeFrom } from './runtime-option.js';
import { ClientProxy, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { InvalidMessageException } from '@nestjs/microservices/errors/invalid-message.exception.js';
import { Observable, from, throwError } from 'rxjs';
import { ZLinkError, configurationError, invalidArgument } from '../../core/errors.js';
import type { ZLinkOptions } from '../../core/options/index.js';
import { ZLinkRuntime } from '../../runtime/index.js';
import { describePattern, readPattern } from './patterns.js';
import { type ZLinkEventsMap, onRuntimeEvent } from './zlink-rpc.context.js';

/**
 * `ZLinkOptions`: the proxy creates its own runtime, starts it on `connect()` (or the first call)
 * and closes it in `close()`. `{ runtime }`: it calls through that runtime (e.g. `ZLinkModule`'s,
 * via `ClientsModule.registerAsync({ inject: [ZLinkRuntime], ... })`) and never starts or closes
 * it. `requestTimeoutMs` is the deadline of each `send()`; it defaults to the runtime's. Nest's
 * `serializer` / `deserializer` options, in either form: `Configuration` (see `ZLinkClientProxy`).
 */
export type ZLinkClientProxyOptions =
  ZLinkOptions | { readonly runtime: ZLinkRuntime; readonly requestTimeoutMs?: number };

type CallKind = 'send' | 'request';

/**
 * A Nest `ClientProxy` over ZLink channels, for
 * `ClientsModule.register([{ name, customClass: ZLinkClientProxy, options }])`.
 *
 * `send({ channel, packet }, data)` is a cold Observable: each subscription makes one request to one
 * Server of the channel (select-one by weight) and emits its reply once; unsubscribing before the
 * reply cancels the request (it ends `Cancelled` on this side; nothing stays pending).
 * `emit({ channel, packet }, data)` sends one-way at once, like Nest's own clients, and completes when
 * the local queue accepted it. Failures reach subscribers as `ZLinkError` (`Timeout`, `RemoteError`
 * with the server's `details`, `NotFound`, `InvalidArgument` for a bad pattern, ...). As on Nest's own
 * transports, a subclass may override `serializeResponse()` (each `send()` reply) and
 * `serializeError()` (each `send()` failure), and `null`/`undefined` data is refused with Nest's
 * `InvalidMessageException`. Metadata set by `setOnDispatchHook` (`packet.metadata`) travels as ZLink
 * metadata. `status` emits `connected` once `connect()` resolved and `disconnected` after `close()`.
 * Nest's `serializer` / `deserializer` options are refused (`Configuration`): the payload encoding is
 * ZLink's own wire, shared with `@ChannelHandler` and `ZLinkRouteClient`.
 */
export class ZLinkClientProxy extends ClientProxy<ZLinkEventsMap> {
  private readonly runtime: ZLinkRuntime;
  private readonly ownsRuntime: boolean;
  private readonly timeoutMs: number | undefined;
  private connecting: Promise<void> | undefined;
  /** Set once `connect()` resolved: calls then go straight to the runtime, without a promise hop. */
  private connected = false;
  private readonly listeners: (() => void)[] = [];

  /** Validates the options at once (`Configuration` naming the field). */
  constructor(options: ZLinkClientProxyOptions) {
    super();
    const { runtime, owned } = runtimeFrom(options, 'ZLinkClientProxy');
    this.runtime = runtime;
    this.ownsRuntime = owned;
    // An owned runtime applies its own requestTimeoutMs; a shared one may get a tighter one here.
    const { requestTimeoutMs } = owned ? {} : (options as { requestTimeoutMs?: unknown });
    if (
      requestTimeoutMs !== undefined &&
      (typeof requestTimeoutMs !== 'number' || !Number.isFinite(requestTimeoutMs) || requestTimeoutMs <= 0)
    ) {
      throw configurationError(
        'ZLinkClientProxy requestTimeoutMs',
        `must be a positive number, got ${String(requestTimeoutMs)}`,
      );
    }
    this.timeoutMs = requestTimeoutMs;
  }

  /** Starts an owned runtime (binds, connects); idempotent. A shared runtime is its owner's to start. */
  connect(): Promise<void> {
    this.connecting ??= (this.ownsRuntime ? this.runtime.start() : Promise.resolve()).then(() => {
      this.connected = true;
      this._status$.next('connected');
    });
    return this.connecting;
  }

  /** Closes an owned runtime (pending requests end `Shutdown`); a shared one is left open. */
  async close(): Promise<void> {
    for (const off of this.listeners.splice(0)) off();
    if (this.ownsRuntime) await this.runtime.close();
    this._status$.next('disconnected');
  }

  /** Listens to the runtime's observability events of one type (`server_ready`, `server_lost`, ...). */
  override on<
    K extends keyof ZLinkEventsMap = keyof ZLinkEventsMap,
    C extends ZLinkEventsMap[K] = ZLinkEventsMap[K],
  >(event: K, callback: C): void {
    this.listeners.push(onRuntimeEvent(this.runtime, event, callback));
  }

  /** The `ZLinkRuntime` (for `waitForCandidates()`, `snapshot()`, `routeClient`, ...). */
  unwrap<T = ZLinkRuntime>(): T {
    return this.runtime as T;
  }

  /**
   * A cold Observable: each subscription connects if needed, runs the dispatch hook, and makes one
   * request to one Server of the channel (select-one by weight), as Nest's `ClientProxy.send()` does
   * through `createObserver()`: the reply goes through `serializeResponse()` and is emitted once, then
   * the Observable completes; a reply of `undefined` (a handler that returned nothing) completes without
   * a value, as on Nest's transports. A failure of the request — a pattern other than
   * `{ channel, packet }` (`InvalidArgument`), `Timeout`, `RemoteError`, `NotFound`, `Shutdown`, ... —
   * goes through `serializeError()` and reaches the subscriber as what it returns. A failed `connect()`
   * or a throwing dispatch hook reaches it as thrown, not serialized (Nest's order); so does what a
   * throwing `serializeResponse()` / `serializeError()` threw. `null` or `undefined` pattern or data:
   * Nest's `InvalidMessageException` as the error notification, nothing sent. Unsubscribing before the
   * reply cancels the request (`Cancelled` on this side, nothing stays pending, no hook runs).
   */
  override send<TResult = unknown, TInput = unknown>(pattern: unknown, data: TInput): Observable<TResult> {
    if (isNil(pattern) || isNil(data)) return throwError(() => new InvalidMessageException());
    return new Observable<TResult>((subscriber) => {
      let teardown: (() => void) | undefined;
      let closed = false;
      const start = (): void => {
        if (closed) return;
        const metadata = this.hookMetadata(pattern, data);
        teardown = this.request(pattern, data, metadata, this.createObserver(subscriber), subscriber);
      };
      if (this.connected) start();
      else
        this.connect().then(
          () => {
            try {
              start();
            } catch (error) {
              subscriber.error(error);
            }
          },
          (error: unknown) => subscriber.error(error),
        );
      return () => {
        closed = true;
        teardown?.();
      };
    });
  }

  /**
   * Sends one-way at once, whether or not anyone subscribes (Nest's contract; a failure nobody observes
   * is not an unhandled rejection). The Observable emits `undefined` and completes when the local queue
   * accepted the message — not when the server handled it — or errors with the `ZLinkError` of the send
   * (`NotFound`, `InvalidArgument` for a bad pattern, `Timeout` for a queue that stayed full, ...), not
   * passed through `serializeError()` (Nest's `emit()` does not either). `null` or `undefined` pattern
   * or data: Nest's `InvalidMessageException` as the error notification, nothing sent.
   */
  override emit<TResult = unknown, TInput = unknown>(pattern: unknown, data: TInput): Observable<TResult> {
    if (isNil(pattern) || isNil(data)) return throwError(() => new InvalidMessageException());
    const sent = this.connected
      ? this.sendEvent(pattern, data)
      : this.connect().then(() => this.sendEvent(pattern, data));
    sent.catch(() => undefined);
    return from(sent) as Observable<TResult>;
  }

  /**
   * Nest's low-level request path, for code that calls it directly (`send()` does not): one request
   * with `packet.metadata` as built (the dispatch hook is not run again); `callback` gets
   * `{ response, isDisposed: true }` or `{ err }` once, raw (serializing is `createObserver()`'s part).
   * The returned teardown cancels the request; after it, `callback` is not called.
   */
  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    let teardown: (() => void) | undefined;
    let closed = false;
    const start = (): void => {
      if (!closed) teardown = this.request(packet.pattern, packet.data, packet.metadata, callback, undefined);
    };
    if (this.connected) start();
    else
      this.connect().then(start, (err: unknown) => {
        if (!closed) callback({ err });
      });
    return () => {
      closed = true;
      teardown?.();
    };
  }

  /** Nest's low-level event path (`emit()` does not use it): one send with `packet.metadata` as built. */
  protected dispatchEvent<T = unknown>(packet: ReadPacket): Promise<T> {
    const send = (): Promise<unknown> =>
      this.call('send', packet.pattern, packet.data, undefined, packet.metadata);
    return (this.connected ? send() : this.connect().then(send)) as Promise<T>;
  }

  /** What the dispatch hook sets as `packet.metadata` (Nest 12's out-of-band values: trace id, tenant). */
  private hookMetadata(pattern: unknown, data: unknown): Readonly<Record<string, string>> | undefined {
    return this.onDispatchHook ? this.createPacket(pattern, data).metadata : undefined;
  }

  private sendEvent(pattern: unknown, data: unknown): Promise<unknown> {
    let metadata: Readonly<Record<string, string>> | undefined;
    try {
      metadata = this.hookMetadata(pattern, data);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.call('send', pattern, data, undefined, metadata);
  }

  /**
   * One request whose outcome goes to `callback` once, unless the returned teardown ran first (it
   * aborts the call). A `callback` that throws (a `serializeResponse()` that throws) hands what it
   * threw to `fallback.error`, or else to `callback` as `{ err }` once more.
   */
  private request(
    pattern: unknown,
    data: unknown,
    metadata: Readonly<Record<string, string>> | undefined,
    callback: (packet: WritePacket) => void,
    fallback: { error(error: unknown): void } | undefined,
  ): () => void {
    const abort = new AbortController();
    let live = true;
    const settle = (packet: WritePacket): void => {
      if (!live) return;
      live = false;
      try {
        callback(packet);
      } catch (thrown) {
        if (fallback) fallback.error(thrown);
        else if (packet.err === undefined) callback({ err: thrown });
      }
    };
    this.call('request', pattern, data, abort.signal, metadata).then(
      (response) => settle({ response, isDisposed: true }),
      (err: unknown) => settle({ err }),
    );
    return () => {
      if (!live) return;
      live = false;
      abort.abort(new ZLinkError('Cancelled', 'the subscriber unsubscribed'));
    };
  }

  private call(
    kind: CallKind,
    pattern: unknown,
    data: unknown,
    signal: AbortSignal | undefined,
    metadata: Readonly<Record<string, string>> | undefined,
  ): Promise<unknown> {
    const target = readPattern(pattern);
    if (typeof target === 'string')
      return Promise.reject(invalidArgument(`pattern ${describePattern(pattern)}`, target));
    const route = this.runtime.routeClient;
    const options = { timeoutMs: this.timeoutMs, signal };
    if (kind === 'send') {
      const send = route.sendToChannel(target.channel, target.packet, data);
      return (metadata ? send.metadata(metadata) : send).async(options);
    }
    const request = route.requestToChannel(target.channel, target.packet, data);
    return (metadata ? request.metadata(metadata) : request).async(options);
  }
}

/** Nest's `isNil`: what `ClientProxy.send()` / `emit()` refuse as pattern or data. */
function isNil(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}
