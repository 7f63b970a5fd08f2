import type { Cluster, Redis } from 'ioredis';
import type { NodeRun, ObjectKey, StoreVersion } from '../../core/ports/index.js';
import type { RawCasResult, RawObjectRecords, RawRecord } from '../records/object-records.js';
import { type Reply, casReply, getReply, listReply } from './object-replies.js';
import type { RedisConnectionOptions } from './client.js';
import { ObjectStoreKeys } from './object-keys.js';
import { OBJECT_CAS, OBJECT_GET, OBJECT_LIST } from './object-scripts.js';
import { StoreClient } from './store-client.js';

export interface RedisObjectStoreOptions extends RedisConnectionOptions {
  /** Keeps two stores on one Redis apart; see each store for its default. */
  readonly keyPrefix?: string;
}

interface ScriptCommands {
  zlinkObjectGet(...args: (string | number)[]): Promise<Reply>;
  zlinkObjectCas(...args: (string | number)[]): Promise<Reply>;
  zlinkObjectList(...args: (string | number)[]): Promise<Reply>;
}

type Client = (Redis | Cluster) & ScriptCommands;

/**
 * An object store's records on Redis (standalone, Sentinel or Cluster): each step is one Lua script
 * on one hash slot, so a compare-and-swap, the version it assigns and the index entries it moves are
 * one atomic step; records carry no TTL (see docs/operations.md#records-in-redis). A failure names
 * the store and its cause (see `StoreClient`).
 */
export class RedisObjectRecords implements RawObjectRecords {
  private readonly connection: StoreClient<Client>;
  private readonly client: Client;
  private readonly keys: ObjectStoreKeys;

  /**
   * `storeName` names the store in messages (`Authority Store`), `store` in keys (`authority`);
   * `recordTtlMs` (0: none) is how long a record, its indexes and the counter outlive the last write;
   * `leasePrefix` is the Location Store's key prefix, where `cas` reads the leases it is told to
   * wait out (default: this store's own, which the Authority Store shares).
   */
  constructor(
    options: RedisObjectStoreOptions,
    store: string,
    defaultPrefix: string,
    storeName: string,
    private readonly recordTtlMs = 0,
    leasePrefix?: string,
  ) {
    const keyPrefix = options.keyPrefix ?? defaultPrefix;
    this.keys = new ObjectStoreKeys(keyPrefix, store, leasePrefix ?? keyPrefix);
    this.connection = new StoreClient<Client>(options, storeName, keyPrefix);
    this.client = this.connection.client;
    this.client.defineCommand('zlinkObjectGet', { numberOfKeys: 1, lua: OBJECT_GET });
    this.client.defineCommand('zlinkObjectCas', { numberOfKeys: 3, lua: OBJECT_CAS });
    this.client.defineCommand('zlinkObjectList', { numberOfKeys: 1, lua: OBJECT_LIST });
  }

  async get(key: ObjectKey): Promise<{ now: number; stored: RawRecord | undefined }> {
    return getReply(await this.connection.run(this.client.zlinkObjectGet(this.keys.forRecord(key).record)));
  }

  async cas(
    key: ObjectKey,
    expected: StoreVersion | 'absent',
    body: string | undefined,
    indexRids: readonly string[],
    unlessAlive: readonly NodeRun[] = [],
  ): Promise<RawCasResult> {
    const k = this.keys.forRecord(key);
    const leases = unlessAlive.map((run) => this.keys.ownerLease(key.mesh, run.rid, run.nodeGeneration));
    const reply = await this.connection.run(
      this.client.zlinkObjectCas(
        k.record,
        k.counter,
        leases[0]?.index ?? k.counter,
        String(expected),
        body ?? '',
        k.indexPrefix,
        k.member,
        leases.map((lease) => lease.member).join(' '),
        this.recordTtlMs,
        ...indexRids.map((rid) => this.keys.indexName(rid)),
      ),
    );
    return casReply(reply);
  }

  async list(
    mesh: string,
    rid: string,
  ): Promise<{ now: number; entries: { key: ObjectKey; stored: RawRecord }[] }> {
    const k = this.keys.forIndex(mesh, rid);
    return listReply(
      await this.connection.run(this.client.zlinkObjectList(k.index, k.recordPrefix)),
      (member) => this.keys.keyOfMember(mesh, member),
    );
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
