import {
  type AuthorityStore,
  type DescriptorKind,
  type LocationDescriptor,
  type LocationStore,
  type PutResult,
  descriptorScope,
} from '../../core/ports/index.js';
import { MemoryAuthorityStore } from './memory-object-stores.js';

interface Entry {
  descriptor: LocationDescriptor;
  leaseEnd: number;
}

/**
 * A Location Store inside one process, for single-process use and tests; by explicit opt-in only — the
 * framework never substitutes it when no store is configured (docs/protocol.md#location-store). Same contract
 * as the Redis store: revision-checked writes, leases, one-point-in-time reads, change hints.
 */
export class MemoryLocationStore implements LocationStore {
  private readonly authorities = new MemoryAuthorityStore((mesh, run) => {
    const entries = this.scopes.get(scopeKey('mesh-node', mesh));
    return (
      entries !== undefined && this.live(entries, JSON.stringify([run.rid, run.nodeGeneration])) !== undefined
    );
  });
  private readonly scopes = new Map<string, Map<string, Entry>>();
  private readonly listeners = new Map<string, Set<() => void>>();

  put(descriptor: LocationDescriptor, leaseMs: number): Promise<PutResult> {
    const [scope, member] = this.address(descriptor);
    const entries = this.entries(scope);
    const current = this.live(entries, member);
    if (current && current.descriptor.revision >= descriptor.revision) return Promise.resolve('stale');
    entries.set(member, { descriptor, leaseEnd: Date.now() + leaseMs });
    this.notify(scope);
    return Promise.resolve('written');
  }

  refresh(descriptors: readonly LocationDescriptor[], leaseMs: number): Promise<boolean> {
    let all = true;
    for (const d of descriptors) {
      const [scope, member] = this.address(d);
      const entry = this.live(this.entries(scope), member);
      if (entry) entry.leaseEnd = Date.now() + leaseMs;
      else all = false;
    }
    return Promise.resolve(all);
  }

  remove(descriptor: LocationDescriptor): Promise<void> {
    const [scope, member] = this.address(descriptor);
    this.entries(scope).delete(member);
    this.notify(scope);
    return Promise.resolve();
  }

  list(kind: DescriptorKind, scope: string): Promise<LocationDescriptor[]> {
    const entries = this.entries(scopeKey(kind, scope));
    const out: LocationDescriptor[] = [];
    for (const member of [...entries.keys()]) {
      const entry = this.live(entries, member);
      if (entry) out.push(entry.descriptor);
    }
    return Promise.resolve(out);
  }

  watch(kind: DescriptorKind, scope: string, onChange: () => void): Promise<() => Promise<void>> {
    const key = scopeKey(kind, scope);
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(onChange);
    return Promise.resolve(() => {
      set.delete(onChange);
      return Promise.resolve();
    });
  }

  /** In-process: it always answers. */
  ping(): Promise<void> {
    return Promise.resolve();
  }

  /** The Spot and Actor authority records of this store's meshes, kept in this process too. */
  authorityStore(): AuthorityStore {
    return this.authorities;
  }

  close(): Promise<void> {
    this.listeners.clear();
    return Promise.resolve();
  }

  private address(d: LocationDescriptor): [scope: string, member: string] {
    return [scopeKey(d.kind, descriptorScope(d)), JSON.stringify([d.rid, d.generation])];
  }

  private entries(scope: string): Map<string, Entry> {
    let entries = this.scopes.get(scope);
    if (!entries) this.scopes.set(scope, (entries = new Map()));
    return entries;
  }

  /** The entry if its lease still runs; an expired one is dropped on the way. */
  private live(entries: Map<string, Entry>, member: string): Entry | undefined {
    const entry = entries.get(member);
    if (entry && entry.leaseEnd <= Date.now()) {
      entries.delete(member);
      return undefined;
    }
    return entry;
  }

  /** Listeners hear of a change after the caller's turn, as they would from Redis. */
  private notify(scope: string): void {
    const set = this.listeners.get(scope);
    if (!set || set.size === 0) return;
    setImmediate(() => {
      for (const listener of [...set]) {
        try {
          listener();
        } catch {
          // A listener's failure is its own.
        }
      }
    });
  }
}

const scopeKey = (kind: DescriptorKind, scope: string): string => JSON.stringify([kind, scope]);
