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

/** Client options a store sets for itself, below the caller's own (which win). */
export interface ClientDefaults {
  /** Connect on the first command (or `connect()`), not when the client is built. */
  readonly lazyConnect?: boolean;
  /** Cluster only: commands sent in one tick leave as one pipeline per node. */
  readonly enableAutoPipelining?: boolean;
}

/**
 * The ioredis client of a store: a command fails after `COMMAND_TIMEOUT_MS` and is tried once
 * more at most, unless the caller's options say otherwise, so a store outage reaches the caller
 * as an error instead of an unbounded wait.
 */
export function createRedisClient(
  options: RedisConnectionOptions,
  defaults: ClientDefaults = {},
): Redis | Cluster {
  const { lazyConnect, enableAutoPipelining } = defaults;
  const base = {
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    ...(lazyConnect && { lazyConnect }),
  };
  if (options.cluster) {
    const { nodes, options: clusterOptions } = options.cluster;
    return new Cluster(nodes, {
      ...(lazyConnect && { lazyConnect }),
      ...(enableAutoPipelining && { enableAutoPipelining }),
      ...clusterOptions,
      redisOptions: { ...base, ...clusterOptions?.redisOptions },
    });
  }
  if (typeof options.redis === 'string') return new Redis(options.redis, base);
  return new Redis({ ...base, ...options.redis });
}

/** How long a close waits for a connection to end before it lets ioredis finish it alone. */
const CLOSE_WAIT_MS = 1000;

/**
 * Closes `client` and resolves once its connection has ended (`'end'`), or after `CLOSE_WAIT_MS`.
 * `disconnect()` alone half-closes the socket and arms a timer that destroys it if the server never
 * closes its side: a caller that went on at once left that socket and a 2 s timer behind it (a
 * process, or a test worker, that then exits late). Never rejects.
 */
export async function closeRedisClient(client: Redis | Cluster): Promise<void> {
  if (client.status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<void>((done) => {
    client.once('end', () => done());
    timer = setTimeout(done, CLOSE_WAIT_MS);
    timer.unref();
  });
  client.disconnect();
  await ended;
  clearTimeout(timer);
}
