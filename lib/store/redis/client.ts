import { Cluster, type ClusterNode, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';

/** Where a Redis-backed store connects: one Redis (standalone or Sentinel) or a Cluster. */
export interface RedisConnectionOptions {
  /** A `redis://` URL or ioredis options (Sentinel: `sentinels` and `name`), passed through. */
  readonly redis?: string | RedisOptions;
  /** A Redis Cluster instead: its seed nodes and ioredis cluster options, passed through. */
  readonly cluster?: { readonly nodes: ClusterNode[]; readonly options?: ClusterOptions };
}

/** How long one store command may take before it fails (ioredis `commandTimeout`), unless set. */
const COMMAND_TIMEOUT_MS = 2000;

/**
 * The ioredis client of a store: a command fails after `COMMAND_TIMEOUT_MS` and is tried once
 * more at most, unless the caller's options say otherwise, so a store outage reaches the caller
 * as an error instead of an unbounded wait.
 */
export function createRedisClient(options: RedisConnectionOptions): Redis | Cluster {
  const base = { commandTimeout: COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 1 };
  if (options.cluster) {
    const { nodes, options: clusterOptions } = options.cluster;
    return new Cluster(nodes, {
      ...clusterOptions,
      redisOptions: { ...base, ...clusterOptions?.redisOptions },
    });
  }
  if (typeof options.redis === 'string') return new Redis(options.redis, base);
  return new Redis({ ...base, ...options.redis });
}
