/**
 * `nestjs-zlink/microservices`: the Nest microservice transport strategy and client proxy. A subpath
 * of its own because `@nestjs/microservices` is an optional peer: `import 'nestjs-zlink'` must work
 * without it.
 */
export {
  ZLINK_TRANSPORT,
  ZLinkServer,
  type ZLinkServerAsyncOptions,
  type ZLinkServerOptions,
  type ZLinkServerStatus,
} from './zlink-server.js';
export { ZLinkClientProxy, type ZLinkClientProxyOptions } from './zlink-client-proxy.js';
export { ZLinkRpcContext, type ZLinkEventsMap } from './zlink-rpc.context.js';
export type { ZLinkPattern } from './patterns.js';
