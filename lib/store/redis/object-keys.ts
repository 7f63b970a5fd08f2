import type { ObjectKey } from '../../core/ports/index.js';

/** Names are URI-encoded inside keys: a `{`, `}` or `:` in a MeshName or id must not change the layout. */
const enc = encodeURIComponent;

/**
 * Key layout of one object store under `prefix`, one hash slot per (store, mesh), `<slot>` below:
 * - `<slot>:r:<kind>:<id>` — a record (hash: version, body, writtenAt, index);
 * - `<slot>:v` — the mesh's version counter: versions are never reused. The Authority Store's is never
 *   removed (a version is an ObjectGeneration, and a reference may outlive every record); the
 *   Relocation Store's expires with its records (see `RELOCATION_RECORD_TTL_MS`);
 * - `<slot>:x:<rid>` — the index of one NodeRid (set of `<kind>:<id>`).
 *
 * The Relocation Store's slot is `<prefix>:{relocation:<mesh>}`. The Authority Store's is
 * `<prefix>:{mesh-node:<mesh>}:authority`: the hash slot of the mesh's MeshNode descriptors in the
 * Location Store it sits beside, so one script can take a record over only while the previous owner's
 * descriptor has no live lease (`takeOver`), atomically, on a Cluster too.
 *
 * One slot per mesh keeps a record, the counter and the indexes it is listed in within one Lua
 * script, so a compare-and-swap and its index update are one atomic step in a Cluster too. The
 * price: all objects of one mesh live on one Cluster shard. `<store>` (`authority`, `relocation`)
 * also keeps these keys apart from the Location Store's `{<descriptor kind>:<scope>}` slots when two
 * stores share a prefix.
 */
export class ObjectStoreKeys {
  /** `leasePrefix`: the Location Store's key prefix, where node runs' leases are (default: `prefix`). */
  constructor(
    private readonly prefix: string,
    private readonly store: string,
    private readonly leasePrefix = prefix,
  ) {}

  slot(mesh: string): string {
    return this.store === 'authority'
      ? `${this.prefix}:{mesh-node:${enc(mesh)}}:authority`
      : `${this.prefix}:{${this.store}:${enc(mesh)}}`;
  }

  /** The record and counter keys of `key`, and its member name in an index. */
  forRecord(key: ObjectKey) {
    const slot = this.slot(key.mesh);
    const member = `${enc(key.kind)}:${enc(key.id)}`;
    return { record: `${slot}:r:${member}`, counter: `${slot}:v`, indexPrefix: `${slot}:x:`, member };
  }

  /**
   * Where the Location Store keeps the lease of node run (`rid`, `generation`) on `mesh`: its MeshNode
   * descriptor index (score = lease end) and member (see `StoreKeys`). In the Authority Store's own
   * hash slot; in another one for the Relocation Store (see `RecordsAudit`).
   */
  ownerLease(mesh: string, rid: string, generation: string) {
    return {
      index: `${this.leasePrefix}:{mesh-node:${enc(mesh)}}:i`,
      member: `${enc(rid)}:${enc(generation)}`,
    };
  }

  /** The index of NodeRid `rid` in `mesh`, and the prefix its members name records under. */
  forIndex(mesh: string, rid: string) {
    const slot = this.slot(mesh);
    return { index: `${slot}:x:${enc(rid)}`, recordPrefix: `${slot}:r:` };
  }

  /** The name a NodeRid has inside keys (an index suffix). */
  indexName(rid: string): string {
    return enc(rid);
  }

  /** The key an index member names, `undefined` when the member is not one of ours. */
  keyOfMember(mesh: string, member: string): ObjectKey | undefined {
    const parts = member.split(':');
    if (parts.length !== 2) return undefined;
    try {
      const [kind, id] = parts.map((p) => decodeURIComponent(p));
      return kind === 'spot' || kind === 'actor' ? { mesh, kind, id } : undefined;
    } catch {
      return undefined;
    }
  }
}
