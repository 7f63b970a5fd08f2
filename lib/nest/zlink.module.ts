import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { ZLinkOptions } from '../core/options/index.js';
import {
  ZLinkFanoutClient,
  ZLinkObjects,
  ZLinkRouteClient,
  ZLinkRuntime,
  ZLinkSpotPublisher,
} from '../runtime/index.js';
import { ZLinkHandlerExplorer } from './handler.explorer.js';
import { ZLinkEventStream } from './observability/zlink-event-stream.js';
import { ZLinkLogBridge } from './observability/zlink-log-bridge.js';
import { ZLinkMetadataAccessor } from './zlink-metadata.accessor.js';
import {
  ZLINK_ASYNC_OPTIONS_TYPE,
  ZLINK_MODULE_OPTIONS,
  ZLinkConfigurableModule,
} from './zlink.module-definition.js';

/**
 * What `ZLinkModule.forRootAsync()` takes: `{ imports?, inject?, useFactory }` (or `useClass`/`useExisting`).
 */
export type ZLinkModuleAsyncOptions = typeof ZLINK_ASYNC_OPTIONS_TYPE;

/**
 * The ZLink dynamic module, global: `ZLinkModule.forRoot(options)` or `ZLinkModule.forRootAsync({ imports,
 * inject, useFactory })`. Exports `ZLinkRuntime` and `ZLinkRouteClient`, `ZLinkObjects`, `ZLinkFanoutClient`,
 * `ZLinkSpotPublisher` and `ZLinkEventStream` (events as Observables) as injectables. Lifecycle events are
 * logged through Nest's Logger (context `ZLink`).
 *
 * Lifecycle: the options are validated when the runtime is created (a bad option fails the bootstrap with
 * `Configuration` naming it; like any provider error, Nest aborts the process there unless the application is
 * created with `abortOnError: false`). `@ChannelHandler` methods are registered on module init; listeners
 * bind and clients connect on application bootstrap (a handler on a channel this process does not serve, or a
 * duplicate handler, rejects the bootstrap with `Configuration`). `app.close()` drains local servers
 * (docs/protocol.md#drain; up to `drainTimeoutMs`, descriptors are released), then ends pending calls with
 * `Shutdown` and closes every socket.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: ZLinkRuntime,
      useFactory: (options: ZLinkOptions) => new ZLinkRuntime(options),
      inject: [ZLINK_MODULE_OPTIONS],
    },
    {
      provide: ZLinkRouteClient,
      useFactory: (runtime: ZLinkRuntime) => runtime.routeClient,
      inject: [ZLinkRuntime],
    },
    {
      provide: ZLinkObjects,
      useFactory: (runtime: ZLinkRuntime) => runtime.objects,
      inject: [ZLinkRuntime],
    },
    {
      provide: ZLinkFanoutClient,
      useFactory: (runtime: ZLinkRuntime) => runtime.fanoutClient,
      inject: [ZLinkRuntime],
    },
    {
      provide: ZLinkSpotPublisher,
      useFactory: (runtime: ZLinkRuntime) => runtime.spotPublisher,
      inject: [ZLinkRuntime],
    },
    ZLinkMetadataAccessor,
    ZLinkHandlerExplorer,
    ZLinkEventStream,
    ZLinkLogBridge,
  ],
  exports: [
    ZLinkRuntime,
    ZLinkRouteClient,
    ZLinkObjects,
    ZLinkFanoutClient,
    ZLinkSpotPublisher,
    ZLinkEventStream,
  ],
})
export class ZLinkModule extends ZLinkConfigurableModule {}
