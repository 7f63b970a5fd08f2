import { runtimeFrom } from './runtime-option.js';
import { ClientProxy, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { Observable, from } from 'rxjs';
import { type ZLinkOptions, ZLinkError, configurationError, invalidArgument } from '../../core/index.js';
import { ZLinkRuntime } from '../../runtime/index.js';
import { describePattern, readPattern } from './patterns.js';
import { type ZLinkEventsMap, onRuntimeEvent } from './zlink-rpc.context.js';

/**
 * `ZLinkOptions`: the proxy creates its own runtime, starts it on `connect()` (or the first call)
 * and closes it in `close()`. `{ runtime }`: it calls through that runtime (e.g. `ZLinkModule`'s,
 * via `ClientsModule.registerAsync({ inject: [ZLinkRuntime], ... })`) and never starts or closes
 * it. `requestTimeoutMs` is the deadline of each `send()`; it defaults to the runtime's.
 */
export type ZLinkClientProxyOptions =
  ZLinkOptions | { readonly runtime: ZLinkRuntime; readonly requestTimeoutMs?: number };

type CallKind = 'send' | 'request';

/** A packet Nest already built went through the dispatch hook once; it must not run again. */
const HOOK_DONE: Readonly<Record<string, string>> = Object.freeze({});

/**
 * A Nest `ClientProxy` over ZLink channels, for
 * `ClientsModule.register([{ name, customClass: ZLinkClientProxy, options }])`.
 *
 * `send({ channel, packet }, data)` is a cold Observable: each subscription makes one request to one
 * Server of the channel (select-one by weight) and emits its reply once; unsubscribing before the
 * reply cancels the request (it ends `Cancelled` on this side; nothing stays pending).
 * `emit({ channel, packet }, data)` sends one-way at once, like Nest's own clients, and completes when
 * the local queue accepted it. Failures reach subscribers as `ZLinkError` (`Timeout`, `RemoteError`
 * with the server's `details`, `NotFound`, `InvalidArgument` for a bad pattern, ...). Metadata set by
 * `setOnDispatchHook` (`packet.metadata`) travels as ZLink metadata. `status` emits `connected` once
 * `connect()` resolved and `disconnected` after `close()`.
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

  override send<TResult = unknown, TInput = unknown>(pattern: unknown, data: TInput): Observable<TResult> {
    return new Observable<TResult>((subscriber) => {
      const abort = new AbortController();
      let settled = false;
      this.dispatch('request', pattern, data, abort.signal).then(
        (reply) => {
          settled = true;
          subscriber.next(reply as TResult);
          subscriber.complete();
        },
        (error: unknown) => {
          settled = true;
          subscriber.error(error);
        },
      );
      return () => {
        if (!settled) abort.abort(new ZLinkError('Cancelled', 'the subscriber unsubscribed'));
      };
    });
  }

  override emit<TResult = unknown, TInput = unknown>(pattern: unknown, data: TInput): Observable<TResult> {
    const sent = this.dispatch('send', pattern, data, undefined);
    // Sent whether or not anyone subscribes (Nest's contract); unobserved, a failure must not be an
    // unhandled rejection.
    sent.catch(() => undefined);
    return from(sent) as Observable<TResult>;
  }

  /** Nest's low-level request path, for code that calls it directly; `send()` does not use it. */
  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    const abort = new AbortController();
    this.dispatch('request', packet.pattern, packet.data, abort.signal, packet.metadata ?? HOOK_DONE).then(
      (response) => callback({ response, isDisposed: true }),
      (err: unknown) => callback({ err }),
    );
    return () => abort.abort();
  }

  /** Nest's low-level event path; `emit()` does not use it. */
  protected dispatchEvent<T = unknown>(packet: ReadPacket): Promise<T> {
    return this.dispatch(
      'send',
      packet.pattern,
      packet.data,
      undefined,
      packet.metadata ?? HOOK_DONE,
    ) as Promise<T>;
  }

  private dispatch(
    kind: CallKind,
    pattern: unknown,
    data: unknown,
    signal: AbortSignal | undefined,
    presetMetadata?: Readonly<Record<string, string>>,
  ): Promise<unknown> {
    const target = readPattern(pattern);
    if (typeof target === 'string')
      return Promise.reject(invalidArgument(`pattern ${describePattern(pattern)}`, target));
    let metadata = presetMetadata;
    try {
      // The dispatch hook may set `packet.metadata` (Nest 12's out-of-band values: trace id, tenant).
      if (this.onDispatchHook && metadata === undefined) metadata = this.createPacket(pattern, data).metadata;
    } catch (error) {
      return Promise.reject(error);
    }
    const route = this.runtime.routeClient;
    const options = { timeoutMs: this.timeoutMs, signal };
    const call = (): Promise<unknown> => {
      if (kind === 'send') {
        const send = route.sendToChannel(target.channel, target.packet, data);
        return (metadata ? send.metadata(metadata) : send).async(options);
      }
      const request = route.requestToChannel(target.channel, target.packet, data);
      return (metadata ? request.metadata(metadata) : request).async(options);
    };
    return this.connected ? call() : this.connect().then(call);
  }
}
