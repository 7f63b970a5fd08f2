import {
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, ExternalContextCreator, MetadataScanner, ModuleRef } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { configurationError } from '../core/errors.js';
import type { HandlerFn } from '../core/calls/index.js';
import {
  type ObjectClassRegistry,
  type SessionHookRegistration,
  checkObjectClasses,
} from '../core/objects/index.js';
import { ZLinkRuntime } from '../runtime/index.js';
import { nestHandler } from './nest-handler.js';
import { discoverObjectClasses } from './object-discovery.js';
import { NestObjectInstances } from './object-instances.js';
import { ZLinkMetadataAccessor } from './zlink-metadata.accessor.js';

type Instance = Record<string, unknown> & object;

/**
 * Finds `@ChannelHandler` and `@NodeHandler` methods on providers and controllers, wraps each in Nest's
 * pipeline and registers it with the runtime (on module init); starts the runtime on application bootstrap
 * and closes it on application shutdown. @internal
 */
@Injectable()
export class ZLinkHandlerExplorer implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private objects: ObjectClassRegistry | undefined;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: ZLinkMetadataAccessor,
    private readonly contextCreator: ExternalContextCreator,
    private readonly runtime: ZLinkRuntime,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * Registers every handler and collects the `@Spot` / `@Actor` classes; a duplicate, a scoped host or a
   * misplaced object decorator throws `Configuration` naming `Class.method`, and so do object classes in
   * a process without a Location Store or an `objectRole: 'server'` mesh. This runs on module init,
   * before `start()` on application bootstrap, so no socket has opened when it throws.
   */
  onModuleInit(): void {
    const seen = new Set<object>();
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    for (const wrapper of wrappers) {
      if (wrapper.isAlias) continue;
      this.exploreWrapper(wrapper, seen);
    }
    const objects = discoverObjectClasses(wrappers, this.scanner);
    checkObjectClasses(this.runtime.options, objects);
    this.objects = objects;
    this.runtime.registerObjectClasses(objects, new NestObjectInstances(this.moduleRef, this.contextCreator));
  }

  /**
   * The object classes found on module init (empty before it): plain descriptions the object runtime
   * builds activations from, each class token resolved through `ModuleRef.resolve` per activation.
   */
  objectClasses(): ObjectClassRegistry | undefined {
    return this.objects;
  }

  /**
   * Binds listeners and connects clients; rejects `Configuration` (e.g. a handler on an unserved channel).
   */
  onApplicationBootstrap(): Promise<void> {
    return this.runtime.start();
  }

  /**
   * Drains (docs/protocol.md#drain: local servers leave selection, accepted handlers finish up to
   * `drainTimeoutMs`, descriptors are released), then ends pending calls with `Shutdown` and closes every
   * socket, in the first shutdown phase: Nest runs a global module's hooks after the other modules' in each
   * phase, so this is the earliest ZLink can stop on its own — before anyone's `beforeApplicationShutdown`.
   * An application that closes what its handlers use in its own `onModuleDestroy` should `drain()` or
   * `close()` the runtime there first.
   */
  async onModuleDestroy(): Promise<void> {
    await this.runtime.drain();
    await this.runtime.close();
  }

  private exploreWrapper(wrapper: InstanceWrapper, seen: Set<object>): void {
    const isStatic = wrapper.isDependencyTreeStatic() && !wrapper.isTransient;
    const instance = wrapper.instance as Instance | undefined;
    if (isStatic) {
      if (!instance || typeof instance !== 'object' || seen.has(instance)) return;
      seen.add(instance);
      const prototype = Object.getPrototypeOf(instance) as object | null;
      for (const method of this.scanner.getAllMethodNames(prototype)) this.registerMethod(instance, method);
      return;
    }
    // A scoped host has no single instance to call: refuse it rather than skip its handlers.
    const metatype = wrapper.metatype as { prototype?: object; name?: string } | null | undefined;
    if (wrapper.inject || !metatype?.prototype) return;
    for (const method of this.scanner.getAllMethodNames(metatype.prototype)) {
      const fn = (metatype.prototype as Record<string, unknown>)[method];
      if (this.accessor.count(fn) === 0) continue;
      throw configurationError(
        `handler ${metatype.name ?? String(wrapper.name)}.${method}`,
        'ZLink handlers (@ChannelHandler, @NodeHandler, @FanoutHandler, @SessionHandler and the session hooks) need a singleton (default-scoped) provider or controller; this one is request-scoped or transient',
      );
    }
  }

  private registerMethod(instance: Instance, method: string): void {
    const channelHandlers = this.accessor.channelHandlers(instance[method]);
    const nodeHandlers = this.accessor.nodeHandlers(instance[method]);
    const fanoutHandlers = this.accessor.fanoutHandlers(instance[method]);
    const sessionHandlers = this.accessor.sessionHandlers(instance[method]);
    const source = `${instance.constructor.name}.${method}`;
    for (const { listener, hook } of this.accessor.sessionHooks(instance[method])) {
      const fn = (instance[method] as (...args: never[]) => unknown).bind(instance);
      this.runtime.sessions.registerHook({ listener, hook, fn, source } as SessionHookRegistration);
    }
    if (channelHandlers.length + nodeHandlers.length + fanoutHandlers.length + sessionHandlers.length === 0)
      return;
    const handler = this.createHandler(instance, method);
    for (const { channel, kind, packet } of channelHandlers) {
      this.runtime.registerChannelHandler({ channel, kind, packet, handler, source });
    }
    for (const { mesh, kind, packet } of nodeHandlers) {
      this.runtime.registerNodeHandler({ mesh, kind, packet, handler, source });
    }
    for (const { channel, packet } of fanoutHandlers) {
      this.runtime.registerFanoutHandler({ channel, kind: 'send', packet, handler, source });
    }
    for (const { listener, kind, packet } of sessionHandlers) {
      this.runtime.sessions.registerHandler({ listener, kind, packet, handler, source });
    }
  }

  private createHandler(instance: Instance, method: string): HandlerFn {
    return nestHandler(this.contextCreator, instance, method);
  }
}
