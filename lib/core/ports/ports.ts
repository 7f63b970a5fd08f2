import type { AuthorityStore } from './object-stores.js';
import type { MeshMembership } from '../wire/mesh-records.js';
import type { ObjectRole } from '../kinds.js';
import { curveKeyBytes } from '../curve-keys.js';
import { isEndpoint, isValidWeight } from '../option-checks.js';

/**
 * The Location Store port (docs/protocol.md#location-store): where automatic discovery finds MeshNodes,
 * ClientServer Servers and fanout publishers. Implementations live in `lib/store` (Redis, memory);
 * the rest of the framework sees only this.
 *
 * A descriptor is identified by (kind, scope, NodeRid or Server RID, lifecycle generation): a restarted
 * server is a new descriptor beside the old one, which its lease lets expire, and a client opens one
 * connection intent per descriptor and confirms identity and generation on the real connection
 * (docs/protocol.md#lifecycle-generations). Within one descriptor, a write applies only with a larger
 * revision.
 */
export type DescriptorKind = 'mesh-node' | 'server' | 'publisher';

interface DescriptorBase {
  readonly rid: string;
  readonly generation: string;
  /** Where others connect: the advertised endpoint. */
  readonly endpoint: string;
  /** Grows with every change within one generation (weight, drain, memberships). */
  readonly revision: number;
  /** With CURVE: the Z85 public key the node proves; others connect to this key only. */
  readonly publicKey?: string;
}

export interface MeshNodeDescriptor extends DescriptorBase {
  readonly kind: 'mesh-node';
  readonly mesh: string;
  readonly objectRole: ObjectRole;
  readonly memberships: readonly MeshMembership[];
}

export interface ServerDescriptor extends DescriptorBase {
  readonly kind: 'server';
  readonly channel: string;
  readonly weight: number;
  readonly draining: boolean;
}

export interface PublisherDescriptor extends DescriptorBase {
  readonly kind: 'publisher';
  readonly channel: string;
}

export type LocationDescriptor = MeshNodeDescriptor | ServerDescriptor | PublisherDescriptor;

/** The MeshName of a MeshNode descriptor, the ChannelName of the others: what a reader lists by. */
export function descriptorScope(d: LocationDescriptor): string {
  return d.kind === 'mesh-node' ? d.mesh : d.channel;
}

export type PutResult = 'written' | 'stale';

export interface LocationStore {
  /**
   * Writes `descriptor` under a lease of `leaseMs`, atomically: `stale` (nothing written) when the
   * stored copy of the same descriptor has the same or a larger revision. Readers are notified.
   */
  put(descriptor: LocationDescriptor, leaseMs: number): Promise<PutResult>;
  /** Extends the leases of `descriptors`; `false` when any of them is gone (expired or removed). */
  refresh(descriptors: readonly LocationDescriptor[], leaseMs: number): Promise<boolean>;
  /** Removes a descriptor (graceful stop); readers are notified. */
  remove(descriptor: LocationDescriptor): Promise<void>;
  /** Every live descriptor of `kind` in `scope`, read at one point in time. */
  list(kind: DescriptorKind, scope: string): Promise<LocationDescriptor[]>;
  /**
   * Calls `onChange` after a put or remove in (`kind`, `scope`) — a hint to read again, which may be
   * lost: readers also read on an interval. Resolves with the unsubscribe function once listening.
   */
  watch(kind: DescriptorKind, scope: string, onChange: () => void): Promise<() => Promise<void>>;
  /**
   * One round trip to the store (health checks): resolves when it answers, rejects when it does not
   * within `timeoutMs` or cannot be reached. Optional: a store without it is checked with a `list`.
   */
  ping?(timeoutMs: number): Promise<void>;
  /**
   * The Authority Store that keeps the Spot and Actor records beside these descriptors, for a store
   * given as `locationStore.instance` (a store the framework builds from `redis` / `cluster` gets a
   * Redis one with the same connection and prefix). Optional: without it, an object mesh refuses to
   * start. `MemoryLocationStore` has one, shared by every runtime given the same instance.
   */
  authorityStore?(): AuthorityStore;
  close(): Promise<void>;
}

const isStr = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function isMembership(v: unknown): v is MeshMembership {
  return isRecord(v) && isStr(v.channel) && isValidWeight(v.weight) && typeof v.draining === 'boolean';
}

/**
 * A descriptor read back from a store, checked field by field (a store is shared, and another
 * version or a hand edit may have written it); `undefined` when it is not one.
 */
export function parseDescriptor(value: unknown): LocationDescriptor | undefined {
  if (!isRecord(value)) return undefined;
  const { kind, rid, generation, endpoint, revision } = value;
  // The endpoint is connected to as it stands: one that zeromq would refuse is no descriptor.
  if (!isStr(rid) || !isStr(generation) || !isEndpoint(endpoint)) return undefined;
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision)) return undefined;
  // A key that is not one makes no descriptor: a node would be listed that nobody could reach.
  const { publicKey } = value;
  if (publicKey !== undefined && curveKeyBytes(publicKey) === undefined) return undefined;
  const base = {
    rid,
    generation,
    endpoint,
    revision,
    ...(publicKey !== undefined && { publicKey: publicKey as string }),
  };
  switch (kind) {
    case 'mesh-node': {
      const { mesh, objectRole, memberships } = value;
      if (!isStr(mesh) || !['none', 'client', 'server'].includes(objectRole as string)) return undefined;
      if (!Array.isArray(memberships) || !memberships.every(isMembership)) return undefined;
      return { kind, mesh, objectRole: objectRole as ObjectRole, memberships, ...base };
    }
    case 'server': {
      const { channel, weight, draining } = value;
      if (!isStr(channel) || !isValidWeight(weight) || typeof draining !== 'boolean') return undefined;
      return { kind, channel, weight, draining, ...base };
    }
    case 'publisher': {
      const { channel } = value;
      return isStr(channel) ? { kind, channel, ...base } : undefined;
    }
    default:
      return undefined;
  }
}
