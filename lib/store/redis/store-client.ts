import type { Cluster, Redis } from 'ioredis';
import {
  type ClientDefaults,
  type RedisConnectionOptions,
  closeRedisClient,
  createRedisClient,
} from './client.js';

/** A URL query parameter that may carry a secret (ioredis reads `?password=` as the password). */
const SECRET_PARAM = /pass|pwd|secret|token|auth/i;

/**
 * Where `options` point, as an operator reads it in a message: the URL without its password (in the
 * authority, or a password-, secret-, token- or auth-like query parameter), or `host:port` (Sentinel:
 * its sentinels and master name; Cluster: its seed nodes). Never a secret.
 */
export function redisTarget(options: RedisConnectionOptions): string {
  if (options.cluster) return `cluster ${options.cluster.nodes.map(nodeName).join(',')}`;
  const redis = options.redis;
  if (typeof redis === 'string') {
    try {
      const url = new URL(redis);
      url.password = '';
      for (const name of [...url.searchParams.keys()])
        if (SECRET_PARAM.test(name)) url.searchParams.delete(name);
      return url.href;
    } catch {
      return 'a Redis URL that cannot be read';
    }
  }
  if (redis?.sentinels)
    return `sentinels ${redis.sentinels.map(nodeName).join(',')} (master '${redis.name}')`;
  if (redis?.path) return redis.path;
  return `${redis?.host ?? 'localhost'}:${redis?.port ?? 6379}`;
}

function nodeName(node: unknown): string {
  if (typeof node === 'string' || typeof node === 'number') return String(node);
  const { host, port } = (node ?? {}) as { host?: string; port?: number };
  return `${host ?? 'localhost'}:${port ?? 6379}`;
}

/**
 * One store's ioredis client and the name its failures carry. ioredis reconnects by itself and
 * reports why on its `error` event only; a command that fails meanwhile says "max retries" or
 * "Connection is closed", which names neither the store nor the cause. `run` rewrites such a failure
 * as `<store> <target> (key prefix '<p>'): <why>` with the connection's own error (ECONNREFUSED,
 * ENOTFOUND, NOAUTH...) as its `cause`. The result stays a plain `Error`: a `ZLinkError` from a store
 * means it answered (see `StoreHealth.watch`).
 */
export class StoreClient<C extends Redis | Cluster = Redis | Cluster> {
  readonly client: C;
  /** The store as messages name it: `Location Store redis://host:6379/ (key prefix 'zlink')`. */
  readonly name: string;
  /** The last connection error ioredis reported; cleared when the connection is ready again. */
  lastError: Error | undefined;

  /**
   * `own.name` replaces the name built from `store`, the target and `keyPrefix` (a State Store names
   * itself); `own.defaults` are client options the caller's own override (see `createRedisClient`).
   */
  constructor(
    options: RedisConnectionOptions,
    store: string,
    keyPrefix: string,
    own: { readonly name?: string; readonly defaults?: ClientDefaults } = {},
  ) {
    this.client = createRedisClient(options, own.defaults) as C;
    this.name = own.name ?? `${store} ${redisTarget(options)} (key prefix '${keyPrefix}')`;
    this.watch(this.client);
  }

  /** Keeps `client`'s (this one's, or a duplicate's) connection errors for the messages. */
  watch(client: Redis | Cluster): void {
    // An unheard 'error' event would only be logged by ioredis.
    client.on('error', (error: Error) => {
      this.lastError = error;
    });
    // Only this client's own recovery ends its outage (a subscriber may reconnect first).
    if (client === this.client)
      client.on('ready', () => {
        this.lastError = undefined;
      });
  }

  /** `op`, its failure named: see the class comment. */
  run<T>(op: Promise<T>): Promise<T> {
    return op.catch((error: unknown) => {
      throw this.failure(error);
    });
  }

  /** `error` as the store's failure: while the connection is down, the connection's error is the cause. */
  failure(error: unknown): Error {
    const cause = this.client.status !== 'ready' && this.lastError ? this.lastError : error;
    const why = cause instanceof Error ? cause.message : String(cause);
    return new Error(`${this.name}: ${why}`, { cause });
  }

  close(): Promise<void> {
    return closeRedisClient(this.client);
  }
}
