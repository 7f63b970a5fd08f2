/**
 * Building blocks of the Nest microservice suites: a Nest application with no HTTP platform (no
 * platform package is installed here; `connectMicroservice` needs an `INestApplication`), and an
 * application context holding `ClientsModule` with a `ZLinkClientProxy`.
 */
import 'reflect-metadata';
import {
  type DynamicModule,
  type INestApplication,
  type INestApplicationContext,
  Module,
  type Provider,
  type Type,
} from '@nestjs/common';
import { AbstractHttpAdapter, NestFactory } from '@nestjs/core';
import { type ClientProxy, ClientsModule } from '@nestjs/microservices';
import { type ZLinkOptions } from '../../../lib/index.js';
import { ZLinkClientProxy, type ZLinkClientProxyOptions } from '../../../lib/nest/microservices/index.js';

const noop = (): undefined => undefined;

/**
 * An HTTP adapter that serves nothing: a hybrid application here is about its microservices, and
 * no HTTP platform package is installed. Every member Nest may call during init and close is a no-op.
 */
export class NoHttpAdapter extends AbstractHttpAdapter {
  constructor() {
    super({});
  }
  close = noop;
  initHttpServer = noop;
  useStaticAssets = noop;
  setViewEngine = noop;
  getRequestHostname = noop;
  getRequestMethod = noop;
  getRequestUrl = noop;
  status = noop;
  reply = noop;
  end = noop;
  render = noop;
  redirect = noop;
  setErrorHandler = noop;
  setNotFoundHandler = noop;
  isHeadersSent = noop;
  getHeader = noop;
  setHeader = noop;
  appendHeader = noop;
  registerParserMiddleware = noop;
  enableCors = noop;
  createMiddlewareFactory = (): ((path: string, callback: unknown) => void) => noop;
  getType = (): string => 'none';
  applyVersionFilter = (): (() => () => void) => () => noop;
}

export interface ModuleParts {
  imports?: (Type | DynamicModule)[];
  providers?: Provider[];
  controllers?: Type[];
}

export function moduleOf(parts: ModuleParts): Type {
  @Module({
    imports: parts.imports ?? [],
    providers: parts.providers ?? [],
    controllers: parts.controllers ?? [],
  })
  class AppModule {}
  return AppModule;
}

/** A hybrid-capable application (no HTTP). abortOnError: false so a failing provider rejects. */
export function createHybridApp(parts: ModuleParts): Promise<INestApplication> {
  return NestFactory.create(moduleOf(parts), new NoHttpAdapter(), { logger: false, abortOnError: false });
}

/** A ClientServer Client of `channel` connecting to `endpoint`. */
export function clientOptions(channel: string, endpoint: string, requestTimeoutMs = 5000): ZLinkOptions {
  return { clientServer: { [channel]: { client: { connect: [endpoint] } } }, requestTimeoutMs };
}

/** An application context with `ClientsModule.register([{ name, customClass: ZLinkClientProxy, options }])`. */
export async function bootClientApp(
  name: string,
  options: ZLinkClientProxyOptions,
): Promise<{ app: INestApplicationContext; client: ZLinkClientProxy }> {
  const app = await NestFactory.createApplicationContext(
    moduleOf({ imports: [ClientsModule.register([{ name, customClass: ZLinkClientProxy, options }])] }),
    { logger: false, abortOnError: false },
  );
  return { app, client: app.get<ClientProxy>(name) as ZLinkClientProxy };
}
