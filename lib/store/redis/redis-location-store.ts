import { Cluster, type Redis } from 'ioredis';
import { answerWithin } from '../../core/calls/index.js';
import {
  type DescriptorKind,
  type LocationDescriptor,
  type LocationStore,
  type PutResult,
  parseDescriptor,
} from '../../core/ports/index.js';
import { type RedisConnectionOptions, closeRedisClient } from './client.js';
import { StoreKeys } from './keys.js';
import { LIST, PUT, REFRESH, REMOVE } from './scripts.js';
import { StoreClient } from './store-client.js';

export interface RedisLocationStoreOptions extends RedisConnectionOptions {
  /** Keeps two stores on one Redis apart. @default 'zlink' */
  readonly keyPrefix?: string;
}

interface ScriptCommands {
  zlinkPut(...args: (string | number)[]): Promise<number>;
  zlinkRefresh(...args: (string | number)[]): Promise<number>;
  zlinkRemove(...args: (string | number)[]): Promise<number>;
  zlinkList(...args: (string | number)[]): Promise<string[]>;
}

type Client = (Redis | Cluster) & ScriptCommands;

/**
 * The Location Store on Redis (standalone, Sentinel or Cluster). Writes are Lua scripts, atomic and
 * revision-checked; leases are key TTLs judged by the Redis server's clock; a full read is one
 * script (one point in time); change notifications travel on pub/sub and may be lost, which is why
 * readers also read on an interval. A failure names the store and its cause (see `StoreClient`).
 */
export class RedisLocationStore implements LocationStore {
  private readonly connection: StoreClient<Client>;
  private readonly client: Client;
  private subscriber: (Redis | Cluster) | undefined;
  private readonly listeners = new Map<string, Set<() => void>>();
  private readonly keys: StoreKeys;

  constructor(options: RedisLocationStoreOptions) {
    const keyPrefix = options.keyPrefix ?? 'zlink';
    this.keys = new StoreKeys(keyPrefix);
    this.connection = new StoreClient<Client>(options, 'Location Store', keyPrefix);
    this.client = this.connection.client;
    for (const [name, lua] of [
      ['zlinkPut', PUT],
      ['zlinkRefresh', REFRESH],
      ['zlinkRemove', REMOVE],
      ['zlinkList', LIST],
    ] as const) {
      this.client.defineCommand(name, { numberOfKeys: name === 'zlinkList' ? 1 : 2, lua });
    }
  }

  async put(descriptor: LocationDescriptor, leaseMs: number): Promise<PutResult> {
    const k = this.keys.forDescriptor(descriptor);
    const body = JSON.stringify(descriptor);
    const written = await this.connection.run(
      this.client.zlinkPut(k.key, k.index, descriptor.revision, body, leaseMs, k.member, k.channel),
    );
    return written === 1 ? 'written' : 'stale';
  }

  async refresh(descriptors: readonly LocationDescriptor[], leaseMs: number): Promise<boolean> {
    const results = await this.connection.run(
      Promise.all(
        descriptors.map((d) => {
          const k = this.keys.forDescriptor(d);
          return this.client.zlinkRefresh(k.key, k.index, leaseMs, k.member);
        }),
      ),
    );
    return results.every((r) => r === 1);
  }

  async remove(descriptor: LocationDescriptor): Promise<void> {
    const k = this.keys.forDescriptor(descriptor);
    await this.connection.run(this.client.zlinkRemove(k.key, k.index, k.member, k.channel));
  }

  async list(kind: DescriptorKind, scope: string): Promise<LocationDescriptor[]> {
    const k = this.keys.forScope(kind, scope);
    const bodies = await this.connection.run(this.client.zlinkList(k.index, k.descriptorPrefix));
    const out: LocationDescriptor[] = [];
    for (const body of bodies) {
      let value: unknown;
      try {
        value = JSON.parse(body);
      } catch {
        continue; // not ours to read: skipped, like any malformed descriptor
      }
      const d = parseDescriptor(value);
      if (d && d.kind === kind) out.push(d);
    }
    return out;
  }

  async watch(kind: DescriptorKind, scope: string, onChange: () => void): Promise<() => Promise<void>> {
    const { channel } = this.keys.forScope(kind, scope);
    const subscriber = this.ensureSubscriber();
    let set = this.listeners.get(channel);
    if (!set) {
      this.listeners.set(channel, (set = new Set()));
      try {
        await subscriber.subscribe(channel);
      } catch (error) {
        // Not subscribed: the next watch() must try again rather than find the channel taken.
        if (this.listeners.get(channel) === set && set.size === 0) this.listeners.delete(channel);
        throw this.connection.failure(error);
      }
    }
    set.add(onChange);
    return async () => {
      const current = this.listeners.get(channel);
      if (!current?.delete(onChange) || current.size > 0) return;
      this.listeners.delete(channel);
      await subscriber.unsubscribe(channel).catch(() => undefined);
    };
  }

  /** A Redis PING within `timeoutMs`; fails at once while the connection is down (ioredis would queue it). */
  async ping(timeoutMs: number): Promise<void> {
    const status = this.client.status;
    if (status !== 'ready') {
      const { lastError } = this.connection;
      throw this.connection.failure(lastError ?? new Error(`the connection is ${status}`));
    }
    // Judged after the loop read its sockets (`answerWithin`): a busy caller is not a store that failed.
    await answerWithin(this.connection.run(this.client.ping()), timeoutMs, () => {
      throw this.connection.failure(new Error(`PING got no answer within ${timeoutMs} ms`));
    });
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await Promise.all([this.subscriber && closeRedisClient(this.subscriber), this.connection.close()]);
  }

  private ensureSubscriber(): Redis | Cluster {
    if (this.subscriber) return this.subscriber;
    // A connection of its own: a subscribed connection takes no other commands.
    const subscriber = this.client instanceof Cluster ? this.client.duplicate() : this.client.duplicate();
    this.connection.watch(subscriber);
    subscriber.on('message', (channel: string) => this.hint(this.listeners.get(channel)));
    // Back after a lost connection (ioredis subscribes again by itself): whatever changed meanwhile
    // was never announced, so every watcher gets a hint to read now instead of at its next interval.
    let connectedOnce = false;
    subscriber.on('ready', () => {
      if (connectedOnce) for (const set of this.listeners.values()) this.hint(set);
      connectedOnce = true;
    });
    this.subscriber = subscriber;
    return subscriber;
  }

  private hint(listeners: Set<() => void> | undefined): void {
    for (const listener of listeners ?? []) {
      try {
        listener();
      } catch {
        // A listener's failure is its own.
      }
    }
  }
}
