import type { Redis } from 'ioredis';
import { ZLinkError } from '../../core/errors.js';
import type { DescriptorKind, ObjectKey, StoreVersion } from '../../core/ports/index.js';
import type { RedisConnectionOptions } from './client.js';
import { StoreKeys } from './keys.js';
import { ObjectStoreKeys } from './object-keys.js';
import { RedisObjectRecords } from './redis-object-records.js';
import { StoreClient } from './store-client.js';

/**
 * What a store of this project keeps in Redis, one entry per record (docs/operations.md#records-in-redis):
 * - `descriptor`: a MeshNode, Server or publisher descriptor and its lease entry in its index;
 * - `authority`: the authority record of a Spot or Actor, written by its owner node run;
 * - `relocation`: the record of a move, written by its source and target node runs;
 * - `counter`: a mesh's version counter (kept: see `ObjectStoreKeys`);
 * - `other`: a key under the prefix that is none of these (never removed).
 */
export type RecordKind = 'descriptor' | 'authority' | 'relocation' | 'counter' | 'other';

export interface AuditedRecord {
  readonly kind: RecordKind;
  readonly key: string;
  /** The mesh (MeshNode descriptors, object records) or ChannelName (Server, publisher descriptors). */
  readonly scope?: string;
  /** The node runs that wrote it, `<rid>/<generation>`, and whether any of their leases is alive. */
  readonly writers: readonly string[];
  readonly writerAlive: boolean | undefined;
  /** Its TTL in ms; `undefined` when it has none (or, for a lease entry, no key is left). */
  readonly ttlMs: number | undefined;
  /** An authority or relocation record's StoreVersion as listed: a removal applies to that one only. */
  readonly version?: number;
  /** `live`: a writer holds a lease; `stale`: every writer's lease is gone; `kept`: not judged by writer. */
  readonly state: 'live' | 'stale' | 'kept';
}

/** Removes the descriptor of `ARGV[1]` and its lease entry, unless that lease is alive by now. */
const REMOVE_GONE_DESCRIPTOR = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if score and tonumber(score) > now then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`;

const DESCRIPTOR_KINDS = new Set(['mesh-node', 'server', 'publisher']);
const dec = decodeURIComponent;
/** A glob (SCAN MATCH) matching exactly `prefix` then anything. */
const globOf = (prefix: string) => `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}:*`;

interface Parsed {
  readonly store: 'location' | 'relocation';
  readonly slotKind: string;
  readonly scope: string;
  readonly rest: string[];
}

/**
 * Lists the records of one deployment (a Location Store key prefix and a Relocation Store key prefix)
 * with their writers and whether those writers' leases are alive, by the Redis server's clock, and
 * removes the stale ones: records whose every writer's lease is gone. Never removes a record a live
 * lease wrote: each removal re-checks every writer's lease in the same script as the removal (the
 * takeover compare-and-swap, which also takes the record out of its indexes). One standalone Redis
 * (or a Sentinel's master) holding both prefixes: a Cluster node is refused (`InvalidArgument`).
 */
export class RecordsAudit {
  private readonly connection: StoreClient;
  private readonly authority: RedisObjectRecords;
  private readonly relocation: RedisObjectRecords;
  private readonly authorityKeys: ObjectStoreKeys;
  private readonly locationKeys: StoreKeys;
  /** A standalone or Sentinel connection: the command takes a URL (SCAN of a Cluster is per shard). */
  private readonly client: Redis;
  private notCluster: Promise<void> | undefined;

  constructor(
    options: RedisConnectionOptions,
    private readonly keyPrefix: string,
    private readonly relocationPrefix: string,
  ) {
    this.connection = new StoreClient(options, 'Location Store', keyPrefix);
    this.authority = new RedisObjectRecords(options, 'authority', keyPrefix, 'Authority Store');
    // Its removals wait out the leases kept under the Location Store's prefix (see `remove`).
    this.relocation = new RedisObjectRecords(
      options,
      'relocation',
      relocationPrefix,
      'Relocation Store',
      0,
      keyPrefix,
    );
    this.authorityKeys = new ObjectStoreKeys(keyPrefix, 'authority');
    this.locationKeys = new StoreKeys(keyPrefix);
    this.client = this.connection.client as Redis;
  }

  /**
   * Every record under both prefixes, each key once (one prefix may be nested in the other), read one
   * by one (not one point in time: a report, not a decision). Rejects with `InvalidArgument` on a
   * Redis Cluster node.
   */
  async list(): Promise<AuditedRecord[]> {
    await this.refuseCluster();
    const out: AuditedRecord[] = [];
    const leases = new Map<string, Map<string, number>>();
    const now = await this.now();
    const keys = new Set([...(await this.scan(this.keyPrefix)), ...(await this.scan(this.relocationPrefix))]);
    for (const key of keys) out.push(...(await this.audit(key, this.parse(key), leases, now)));
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * Removes each `stale` record of `records` unless one of its writers' leases is alive by then, or it
   * changed since it was read; resolves with how many were removed. Rejects with `InvalidArgument` on a
   * Redis Cluster node.
   */
  async removeStale(records: readonly AuditedRecord[]): Promise<number> {
    await this.refuseCluster();
    let removed = 0;
    for (const r of records) if (r.state === 'stale' && (await this.remove(r))) removed++;
    return removed;
  }

  close(): Promise<void> {
    return Promise.all([this.connection.close(), this.authority.close(), this.relocation.close()]).then(
      () => undefined,
    );
  }

  private async remove(r: AuditedRecord): Promise<boolean> {
    const client = this.client;
    if (r.kind === 'descriptor') {
      const [index, member] = descriptorLease(r.key);
      const done = await this.connection.run(client.eval(REMOVE_GONE_DESCRIPTOR, 2, r.key, index, member));
      return done === 1;
    }
    if (r.kind !== 'authority' && r.kind !== 'relocation') return false;
    if (r.version === undefined) return false;
    const records = r.kind === 'authority' ? this.authority : this.relocation;
    // Only the version listed: a record taken over (or moved again) since is another writer's. The
    // race: a writer listed gone regains its lease between the listing and this removal (a fenced
    // owner that gets its lease back keeps its objects; a move between two briefly fenced nodes goes
    // on). Its renewal changes no record's version, so the version alone does not see it; the swap
    // re-reads every writer's lease entry (an owner; a move's source and target) and refuses while any
    // is live, in the script that deletes: check and removal are one step. A relocation record's lease
    // entries sit in the Location Store's `{mesh-node:<mesh>}` slot, not its own: one script across two
    // slots, which a standalone Redis runs and a Cluster would refuse (CROSSSLOT) — one reason the
    // command refuses a Cluster (`refuseCluster`). A writer that regains its lease after this removal
    // finds the record gone, as after a takeover (docs/operations.md#nestjs-zlink-records).
    const writers = r.writers.map((w) => {
      const [rid, nodeGeneration] = splitWriter(w);
      return { rid, nodeGeneration };
    });
    const result = await records.cas(objectKeyOf(r), r.version as StoreVersion, undefined, [], writers);
    return result.ok;
  }

  /**
   * Refuses a Redis Cluster node (`INFO cluster`: `cluster_enabled:1`), once per audit: SCAN on one
   * node lists that shard's keys only ("nothing to remove" while other shards hold stale records), and
   * a removal of a key another shard serves fails part-way (MOVED).
   */
  private refuseCluster(): Promise<void> {
    this.notCluster ??= this.connection.run(this.client.info('cluster')).then((info) => {
      if (/^cluster_enabled:1\b/m.test(info))
        throw new ZLinkError(
          'InvalidArgument',
          `${this.connection.name} is a Redis Cluster node (cluster_enabled:1): records are listed and ` +
            'removed on a standalone Redis (or a Sentinel-managed master) only; a Cluster is not supported',
        );
    });
    return this.notCluster;
  }

  /**
   * Which store's layout `key` is read in. A key sits under the longer of the two prefixes when one is
   * nested in the other (`zlink` and `zlink:moves`), and under either when both are the same: there
   * its slot says (`{relocation:<mesh>}` is the Relocation Store's).
   */
  private parse(key: string): Parsed | undefined {
    const under = (prefix: string) => key.startsWith(`${prefix}:`);
    const moved = under(this.relocationPrefix) ? parse(this.relocationPrefix, 'relocation', key) : undefined;
    if (moved?.slotKind === 'relocation') return moved;
    return (under(this.keyPrefix) ? parse(this.keyPrefix, 'location', key) : undefined) ?? moved;
  }

  private async audit(
    key: string,
    parsed: Parsed | undefined,
    leases: Map<string, Map<string, number>>,
    now: number,
  ): Promise<AuditedRecord[]> {
    const ttlMs = await this.ttl(key);
    if (!parsed) return [other(key, ttlMs)];
    const { store, slotKind, scope, rest } = parsed;
    const alive = async (kind: string, s: string, writer: string) =>
      ((await this.leases(leases, kind, s)).get(writer) ?? 0) > now;
    if (store === 'location' && DESCRIPTOR_KINDS.has(slotKind)) {
      if (rest[0] === 'd' && rest.length === 3) {
        const writer = `${rest[1]}:${rest[2]}`;
        const live = await alive(slotKind, scope, writer);
        return [descriptor(key, scope, writer, live, ttlMs)];
      }
      if (rest[0] === 'i' && rest.length === 1) {
        // A lease entry whose descriptor key is gone is listed on its own: it is what a kill leaves.
        const entries: AuditedRecord[] = [];
        for (const [writer, score] of await this.leases(leases, slotKind, scope)) {
          const descriptorKey = `${key.slice(0, -1)}d:${writer}`;
          if ((await this.connection.run(this.client.exists(descriptorKey))) === 0)
            entries.push(descriptor(descriptorKey, scope, writer, score > now, undefined));
        }
        return entries;
      }
      if (slotKind === 'mesh-node' && rest[0] === 'authority')
        return this.objectRecord(key, 'authority', scope, rest.slice(1), ttlMs, alive);
      return [other(key, ttlMs)];
    }
    if (store === 'relocation' && slotKind === 'relocation')
      return this.objectRecord(key, 'relocation', scope, rest, ttlMs, alive);
    return [other(key, ttlMs)];
  }

  private async objectRecord(
    key: string,
    kind: 'authority' | 'relocation',
    mesh: string,
    rest: string[],
    ttlMs: number | undefined,
    alive: (kind: string, scope: string, writer: string) => Promise<boolean>,
  ): Promise<AuditedRecord[]> {
    if (rest[0] === 'v' && rest.length === 1)
      return [
        { kind: 'counter', key, scope: mesh, writers: [], writerAlive: undefined, ttlMs, state: 'kept' },
      ];
    // An index set goes with its last record; it is not a record of its own.
    if (rest[0] === 'x' && rest.length === 2) return [];
    if (rest[0] !== 'r' || rest.length !== 3) return [other(key, ttlMs)];
    const [version, body] = await this.connection.run(this.client.hmget(key, 'version', 'body'));
    const record = parseJson(body ?? null);
    const runs = kind === 'authority' ? [record?.owner] : [record?.source, record?.target];
    const writers = [
      ...new Set(
        runs
          .filter(
            (r): r is { rid: string; nodeGeneration: string } =>
              typeof r?.rid === 'string' && typeof r.nodeGeneration === 'string',
          )
          .map((r) => `${r.rid}/${r.nodeGeneration}`),
      ),
    ];
    let writerAlive = false;
    for (const w of writers) {
      const [rid, gen] = splitWriter(w);
      const member = this.authorityKeys.ownerLease(mesh, rid, gen).member;
      if (await alive('mesh-node', mesh, member)) writerAlive = true;
    }
    // A record that names no writer cannot be judged: it stays.
    const state = writers.length === 0 ? 'kept' : writerAlive ? 'live' : 'stale';
    return [{ kind, key, scope: mesh, writers, writerAlive, ttlMs, state, version: Number(version) }];
  }

  /** The lease entries (member → lease end) of one descriptor index, read once per audit. */
  private async leases(
    cache: Map<string, Map<string, number>>,
    kind: string,
    scope: string,
  ): Promise<Map<string, number>> {
    const { index } = this.locationKeys.forScope(kind as DescriptorKind, scope);
    const cached = cache.get(index);
    if (cached) return cached;
    const flat = await this.connection.run(this.client.zrange(index, '0', '-1', 'WITHSCORES'));
    const entries = new Map<string, number>();
    for (let i = 0; i + 1 < flat.length; i += 2) entries.set(flat[i] as string, Number(flat[i + 1]));
    cache.set(index, entries);
    return entries;
  }

  private async ttl(key: string): Promise<number | undefined> {
    const ms = await this.connection.run(this.client.pttl(key));
    return ms >= 0 ? ms : undefined;
  }

  private async now(): Promise<number> {
    const [s, us] = await this.connection.run(this.client.time());
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  }

  private async scan(prefix: string): Promise<string[]> {
    const client = this.client;
    const keys = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await this.connection.run(
        client.scan(cursor, 'MATCH', globOf(prefix), 'COUNT', 1000),
      );
      for (const k of batch) keys.add(k);
      cursor = next;
    } while (cursor !== '0');
    return [...keys];
  }
}

/** `<prefix>:{<slot kind>:<scope>}<rest>` read back; `undefined` for a key of another layout. */
function parse(prefix: string, store: 'location' | 'relocation', key: string): Parsed | undefined {
  const body = key.slice(prefix.length + 1);
  const close = body.indexOf('}');
  if (!body.startsWith('{') || close < 0) return undefined;
  const slot = body.slice(1, close);
  const colon = slot.indexOf(':');
  if (colon < 0 || body[close + 1] !== ':') return undefined;
  try {
    return {
      store,
      slotKind: slot.slice(0, colon),
      scope: dec(slot.slice(colon + 1)),
      rest: body.slice(close + 2).split(':'),
    };
  } catch {
    return undefined;
  }
}

/** A key under the prefix that is none of ours: listed, never judged. */
function other(key: string, ttlMs: number | undefined): AuditedRecord {
  return { kind: 'other', key, writers: [], writerAlive: undefined, ttlMs, state: 'kept' };
}

function descriptor(
  key: string,
  scope: string,
  member: string,
  live: boolean,
  ttlMs: number | undefined,
): AuditedRecord {
  const [rid, gen] = member.split(':').map((p) => dec(p));
  return {
    kind: 'descriptor',
    key,
    scope,
    writers: [`${rid}/${gen}`],
    writerAlive: live,
    ttlMs,
    state: live ? 'live' : 'stale',
  };
}

/** The index and member of a descriptor key `<slot>:d:<member>`. */
function descriptorLease(key: string): [string, string] {
  const at = key.lastIndexOf(':d:');
  return [`${key.slice(0, at)}:i`, key.slice(at + 3)];
}

/** The object key of an authority or relocation record entry (`<slot>:r:<kind>:<id>`). */
function objectKeyOf(r: AuditedRecord): ObjectKey {
  const parts = r.key.split(':');
  const [kind, id] = parts.slice(-2).map((p) => dec(p));
  return { mesh: r.scope as string, kind: kind as ObjectKey['kind'], id: id as string };
}

function splitWriter(writer: string): [string, string] {
  const at = writer.lastIndexOf('/');
  return [writer.slice(0, at), writer.slice(at + 1)];
}

function parseJson(
  body: string | null,
): Record<string, { rid?: unknown; nodeGeneration?: string }> | undefined {
  if (body === null) return undefined;
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null ? (value as never) : undefined;
  } catch {
    return undefined;
  }
}
