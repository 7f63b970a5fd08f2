import { runtimeFrom } from './runtime-option.js';
import type { InjectionToken } from '@nestjs/common';
import { type CustomStrategy, type MessageHandler, type MsPattern, Server } from '@nestjs/microservices';
import { configurationError } from '../../core/errors.js';
import type { ChannelHandlerFn, MessageKind, ZLinkMessageContext } from '../../core/calls/index.js';
import type { ZLinkOptions } from '../../core/options/index.js';
import { ZLinkRuntime } from '../../runtime/index.js';
import { oneResult } from '../handler-failure.js';
import { type ZLinkPattern, describePattern, readPattern } from './patterns.js';
import { type ZLinkEventsMap, ZLinkRpcContext, onRuntimeEvent } from './zlink-rpc.context.js';

/**
 * The `transportId` of `ZLinkServer`: `@MessagePattern(pattern, ZLINK_TRANSPORT)` binds a handler to it
 * alone.
 */
export const ZLINK_TRANSPORT = Symbol('ZLINK_TRANSPORT');

/**
 * `ZLinkOptions`: the server creates its own runtime, starts it in `listen()` and drains and closes
 * it in `close()`. `{ runtime }`: it serves through that runtime (e.g. `ZLinkModule`'s) and leaves
 * starting and closing it to its owner. Nest's `serializer` / `deserializer` options: `Configuration`.
 */
export type ZLinkServerOptions = ZLinkOptions | { readonly runtime: ZLinkRuntime };

export type ZLinkServerStatus = 'listening' | 'closed';

/** `{ useFactory, inject }` for `NestFactory.createMicroservice()` and `app.connectMicroservice()`. */
export interface ZLinkServerAsyncOptions {
  readonly inject: InjectionToken[];
  readonly useFactory: (runtime: ZLinkRuntime) => CustomStrategy;
}

/**
 * A Nest microservice transport strategy over ZLink channels. `@MessagePattern({ channel, packet })`
 * methods serve requests and `@EventPattern({ channel, packet })` methods one-way sends on
 * ChannelNames this process serves (ClientServer `server` role or a RouteMesh `server` membership),
 * through Nest's pipeline (guards, interceptors, pipes, exception filters; `@Payload()`, `@Ctx()`
 * gives a `ZLinkRpcContext`).
 *
 * ```ts
 * const app = await NestFactory.createMicroservice(AppModule, {
 *   strategy: new ZLinkServer({ clientServer: { orders: { server: { listen: { port: 7400 } } } } }),
 * });
 * await app.listen();
 * ```
 *
 * With `ZLinkModule` in the application, share its runtime: `ZLinkServer.fromModule()`.
 *
 * Unlike Nest's own transports it has no `serializer` / `deserializer` (the options are refused with
 * `Configuration`): requests arrive as ZLink records, routed by channel and packet and decoded from
 * msgpack by the runtime, and replies leave the same way, so `@ChannelHandler` and `ZLinkRouteClient`
 * share the wire. Shape payloads with pipes and results with interceptors.
 */
export class ZLinkServer extends Server<ZLinkEventsMap, ZLinkServerStatus> {
  override transportId = ZLINK_TRANSPORT;
  private readonly runtime: ZLinkRuntime;
  private readonly ownsRuntime: boolean;
  /** Nest keeps handlers under a normalized string; the pattern as written is kept here to route by. */
  private readonly patterns = new Map<string, unknown>();
  private readonly listeners: (() => void)[] = [];
  private registered = false;
  /** Processing hooks set (instrumentation): only then does a message pay for running them. */
  private hooked = false;

  /** Validates `ZLinkOptions` at once (`Configuration` naming the field). */
  constructor(options: ZLinkServerOptions) {
    super();
    const { runtime, owned } = runtimeFrom(options, 'ZLinkServer');
    this.runtime = runtime;
    this.ownsRuntime = owned;
  }

  /**
   * Serves through `ZLinkModule`'s runtime, so `@ChannelHandler` and `@MessagePattern` handlers share
   * its listeners, clients and job queue:
   * `NestFactory.createMicroservice(AppModule, ZLinkServer.fromModule())` or
   * `app.connectMicroservice(ZLinkServer.fromModule())`.
   */
  static fromModule(): ZLinkServerAsyncOptions {
    return {
      inject: [ZLinkRuntime],
      useFactory: (runtime: ZLinkRuntime) => ({ strategy: new ZLinkServer({ runtime }) }),
    };
  }

  override addHandler(
    pattern: unknown,
    callback: MessageHandler,
    isEventHandler = false,
    extras: Record<string, unknown> = {},
  ): void {
    super.addHandler(pattern, callback, isEventHandler, extras);
    this.patterns.set(this.normalizePattern(pattern as MsPattern), pattern);
  }

  /**
   * Registers every handler with the runtime (a pattern other than `{ channel, packet }` with
   * non-empty strings, a duplicate, or a channel this process does not serve: `Configuration`), then
   * starts an owned runtime. A shared runtime is not waited for: its owner starts it (Nest may call
   * this before `app.init()`), and handlers may join it before or after it started.
   */
  listen(callback: (error?: unknown) => void): void {
    this.start().then(
      () => {
        this._status$.next('listening');
        callback();
      },
      (error: unknown) => callback(error),
    );
  }

  /**
   * An owned runtime drains (accepted work finishes, up to `drainTimeoutMs`) and closes. A shared
   * runtime is left to its owner (`ZLinkModule` drains it on application shutdown), and its handlers
   * keep serving until then.
   */
  async close(): Promise<void> {
    for (const off of this.listeners.splice(0)) off();
    if (this.ownsRuntime) {
      await this.runtime.drain();
      await this.runtime.close();
    }
    this._status$.next('closed');
  }

  /** Listens to the runtime's observability events of one type (`server_ready`, `delivery`, ...). */
  on<K extends keyof ZLinkEventsMap = keyof ZLinkEventsMap, C extends ZLinkEventsMap[K] = ZLinkEventsMap[K]>(
    event: K,
    callback: C,
  ): void {
    this.listeners.push(onRuntimeEvent(this.runtime, event, callback));
  }

  /** The `ZLinkRuntime` (for `endpoint()`, `snapshot()`, `drain()`, `routeClient`, ...). */
  unwrap<T = ZLinkRuntime>(): T {
    return this.runtime as T;
  }

  override setOnProcessingStartHook(hook: Parameters<Server['setOnProcessingStartHook']>[0]): void {
    super.setOnProcessingStartHook(hook);
    this.hooked = true;
  }

  override setOnProcessingEndHook(hook: Parameters<Server['setOnProcessingEndHook']>[0]): void {
    super.setOnProcessingEndHook(hook);
    this.hooked = true;
  }

  private async start(): Promise<void> {
    if (!this.registered) {
      this.registered = true;
      this.register();
    }
    if (this.ownsRuntime) await this.runtime.start();
  }

  private register(): void {
    const routes: { pattern: ZLinkPattern; kind: MessageKind; source: string; handler: MessageHandler }[] =
      [];
    // Every pattern is checked before any is registered: a bad one leaves the runtime untouched.
    for (const [key, handler] of this.messageHandlers) {
      const written = this.patterns.has(key) ? this.patterns.get(key) : key;
      const decorator = handler.isEventHandler ? '@EventPattern' : '@MessagePattern';
      const source = `${decorator}(${describePattern(written)})`;
      const pattern = readPattern(written);
      if (typeof pattern === 'string') throw configurationError(`ZLinkServer pattern ${source}`, pattern);
      routes.push({ pattern, kind: handler.isEventHandler ? 'send' : 'request', source, handler });
    }
    for (const { pattern, kind, source, handler } of routes) {
      this.runtime.registerChannelHandler({
        channel: pattern.channel,
        packet: pattern.packet,
        kind,
        source,
        handler: this.channelHandler(handler),
      });
    }
  }

  private channelHandler(handler: MessageHandler): ChannelHandlerFn {
    return (payload: unknown, message: ZLinkMessageContext) => {
      const context = new ZLinkRpcContext(message);
      return this.hooked ? this.withHooks(handler, payload, context) : invoke(handler, payload, context);
    };
  }

  private withHooks(handler: MessageHandler, payload: unknown, context: ZLinkRpcContext): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const run: unknown = this.runWithProcessingHooks(context, async (runEndHook) => {
        try {
          resolve(await invoke(handler, payload, context));
        } catch (error) {
          reject(error);
        } finally {
          runEndHook();
        }
      });
      // A start hook that fails fails the message; it must not become an unhandled rejection.
      Promise.resolve(run).catch(reject);
    });
  }
}

/**
 * Runs Nest's handler (its pipeline included) to one result (see `oneResult`): what the pipeline's
 * exception filter throws — `RpcException`'s payload, `{ status: 'error', message }` — travels as
 * the error reply's details.
 */
function invoke(handler: MessageHandler, payload: unknown, context: ZLinkRpcContext): Promise<unknown> {
  return oneResult(() => handler(payload, context));
}
