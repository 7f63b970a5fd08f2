/** What the discovery suites share: runtimes that find each other only through a real Redis store. */
import type { ChannelHandlerFn, LeaseTiming, ZLinkOptions } from '../../../lib/core/index.js';
import type { ZLinkRuntime } from '../../../lib/runtime/index.js';
import type { Cleanup } from '../../helpers/index.js';
import type { RedisServer } from '../../helpers/redis-server.js';
import { LOCAL, startRuntime } from '../client-server/harness.js';

export { LOCAL };

let prefixes = 0;
/** A key prefix of its own per test, so tests sharing one redis-server never see each other. */
export function freshPrefix(): string {
  return `t${process.pid}-${++prefixes}`;
}

export interface StoreSettings {
  readonly redis: RedisServer;
  readonly keyPrefix: string;
  readonly lease?: Partial<LeaseTiming>;
  readonly fullReadIntervalMs?: number;
  /** `locationStore.startupTimeoutMs`: 0 for a runtime started while the store is down. */
  readonly startupTimeoutMs?: number;
}

function locationStore(s: StoreSettings): NonNullable<ZLinkOptions['locationStore']> {
  return {
    redis: s.redis.url,
    keyPrefix: s.keyPrefix,
    lease: s.lease,
    fullReadIntervalMs: s.fullReadIntervalMs,
    startupTimeoutMs: s.startupTimeoutMs,
  };
}

/** A Server of `channel` that publishes its descriptor; `handler` answers `work` requests. */
export function startServer(
  cleanup: Cleanup,
  store: StoreSettings,
  channel: string,
  server: { rid?: string; weight?: number },
  handler: ChannelHandlerFn,
): Promise<ZLinkRuntime> {
  return startRuntime(
    cleanup,
    {
      locationStore: locationStore(store),
      clientServer: { [channel]: { server: { listen: { port: 0, bindHost: LOCAL }, ...server } } },
    },
    [['request', 'work', handler]],
  );
}

/** A Client of `channel` with `discovery: 'auto'` and no endpoint anywhere. */
export function startAutoClient(
  cleanup: Cleanup,
  store: StoreSettings,
  channel: string,
  extra: Partial<ZLinkOptions> = {},
): Promise<ZLinkRuntime> {
  return startRuntime(cleanup, {
    locationStore: locationStore(store),
    clientServer: { [channel]: { client: { discovery: 'auto' } } },
    ...extra,
  });
}

/** Which server answered: each test handler replies with its server's name. */
export async function countReplies(
  client: ZLinkRuntime,
  channel: string,
  n: number,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const who = (await client.routeClient.requestToChannel(channel, 'work', i).async()) as string;
    counts.set(who, (counts.get(who) ?? 0) + 1);
  }
  return counts;
}
