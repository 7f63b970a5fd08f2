import type { NodeRun, ObjectKey, StoreVersion } from '../../core/ports/index.js';
import {
  AuthorityRecords,
  type RawCasResult,
  type RawObjectRecords,
  type RawRecord,
  RelocationRecords,
} from '../records/object-records.js';

interface Entry extends RawRecord {
  readonly indexRids: readonly string[];
}

interface Mesh {
  /** Versions are never reused within a mesh, across deletes too — as on Redis. */
  counter: number;
  readonly records: Map<string, Entry>;
}

const member = (key: ObjectKey): string => JSON.stringify([key.kind, key.id]);

/**
 * An object store's records inside one process, with the Redis store's semantics: one version
 * counter per mesh, no expiry, bodies kept as JSON (a record read back is a copy, checked like one
 * read from Redis). Each step runs within one synchronous turn, so it is atomic.
 */
class MemoryObjectRecords implements RawObjectRecords {
  private readonly meshes = new Map<string, Mesh>();

  /**
   * Whether node run `run` holds a live lease on `mesh`: the Location Store this store sits beside answers.
   */
  constructor(private readonly leaseAlive: (mesh: string, run: NodeRun) => boolean = () => false) {}

  get(key: ObjectKey): Promise<{ now: number; stored: RawRecord | undefined }> {
    return Promise.resolve({ now: Date.now(), stored: this.mesh(key.mesh).records.get(member(key)) });
  }

  cas(
    key: ObjectKey,
    expected: StoreVersion | 'absent',
    body: string | undefined,
    indexRids: readonly string[],
    unlessAlive: readonly NodeRun[] = [],
  ): Promise<RawCasResult> {
    const now = Date.now();
    const mesh = this.mesh(key.mesh);
    const name = member(key);
    const stored = mesh.records.get(name);
    const matches = expected === 'absent' ? stored === undefined : stored?.version === expected;
    if (!matches) return Promise.resolve({ ok: false, now, stored });
    if (unlessAlive.some((run) => this.leaseAlive(key.mesh, run)))
      return Promise.resolve({ ok: false, now, stored: undefined, ownerAlive: true });
    if (body === undefined) {
      mesh.records.delete(name);
      return Promise.resolve({ ok: true, now, version: undefined });
    }
    const version = ++mesh.counter;
    mesh.records.set(name, { version, body, writtenAt: now, indexRids: [...indexRids] });
    return Promise.resolve({ ok: true, now, version });
  }

  list(
    mesh: string,
    rid: string,
  ): Promise<{ now: number; entries: { key: ObjectKey; stored: RawRecord }[] }> {
    const entries: { key: ObjectKey; stored: RawRecord }[] = [];
    for (const [name, entry] of this.mesh(mesh).records) {
      if (!entry.indexRids.includes(rid)) continue;
      const [kind, id] = JSON.parse(name) as [ObjectKey['kind'], string];
      entries.push({ key: { mesh, kind, id }, stored: entry });
    }
    return Promise.resolve({ now: Date.now(), entries });
  }

  /** The records stay: like a Redis store's, they outlive the handle that wrote them. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  private mesh(name: string): Mesh {
    let mesh = this.meshes.get(name);
    if (!mesh) this.meshes.set(name, (mesh = { counter: 0, records: new Map() }));
    return mesh;
  }
}

/**
 * The Authority Store inside one process, for single-process use and tests; by explicit opt-in only.
 * `leaseAlive` answers a takeover's check (`MemoryLocationStore.authorityStore()` passes its own
 * leases); without it no owner counts as alive.
 */
export class MemoryAuthorityStore extends AuthorityRecords {
  constructor(leaseAlive?: (mesh: string, run: NodeRun) => boolean) {
    super(new MemoryObjectRecords(leaseAlive));
  }
}

/** The Relocation Store inside one process, for single-process use and tests; by explicit opt-in only. */
export class MemoryRelocationStore extends RelocationRecords {
  constructor() {
    super(new MemoryObjectRecords());
  }
}
