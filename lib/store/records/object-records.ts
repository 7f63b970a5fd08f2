import { ZLinkError } from '../../core/errors.js';
import {
  type AuthorityRecord,
  type AuthorityStore,
  type CasResult,
  type DeleteResult,
  type NodeRun,
  type TakeoverResult,
  type ObjectKey,
  type RelocationRecord,
  type RelocationStore,
  type StoreVersion,
  type Versioned,
  type VersionedStore,
  parseAuthorityRecord,
  parseObjectKey,
  parseRelocationRecord,
} from '../../core/ports/index.js';

/** A record as a store keeps it, before it is read: the body is the record's JSON. */
export interface RawRecord {
  readonly version: StoreVersion;
  readonly body: string;
  readonly writtenAt: number;
}

/** What a raw compare-and-swap ended with; `now` is the store's clock at that moment. */
export type RawCasResult =
  | { readonly ok: true; readonly now: number; readonly version: StoreVersion | undefined }
  | {
      readonly ok: false;
      readonly now: number;
      readonly stored: RawRecord | undefined;
      /** A takeover refused: the previous owner still holds a live lease (nothing is read back). */
      readonly ownerAlive?: true;
    };

/**
 * What a backend (Redis, memory) does for an object store: atomic steps on opaque bodies, with the
 * store's clock. Parsing, checking and the port's result shapes are `ObjectRecordStore`'s, once.
 */
export interface RawObjectRecords {
  get(key: ObjectKey): Promise<{ readonly now: number; readonly stored: RawRecord | undefined }>;
  /**
   * Atomically: if the stored version is `expected` (`'absent'`: nothing stored), writes `body`
   * under a new version listed in the indexes of `indexRids`, or deletes the record (`body`
   * undefined) and takes it out of its indexes. Versions come from one counter per mesh.
   */
  cas(
    key: ObjectKey,
    expected: StoreVersion | 'absent',
    body: string | undefined,
    indexRids: readonly string[],
    /** Only while none of these node runs' MeshNode descriptors of `key.mesh` has a live lease. */
    unlessAlive?: readonly NodeRun[],
  ): Promise<RawCasResult>;
  /** Every record listed in the index of NodeRid `rid` of `mesh`, at one point in time. */
  list(
    mesh: string,
    rid: string,
  ): Promise<{ readonly now: number; readonly entries: { key: ObjectKey; stored: RawRecord }[] }>;
  close(): Promise<void>;
}

/** What one store holds: how its records are read back and which NodeRids list them. */
export interface ObjectRecordSchema<R> {
  /** Names the store in messages and keys: `authority`, `relocation`. */
  readonly name: string;
  readonly parse: (value: unknown) => R | undefined;
  readonly indexRids: (record: R) => readonly string[];
}

export const AUTHORITY_SCHEMA: ObjectRecordSchema<AuthorityRecord> = {
  name: 'authority',
  parse: parseAuthorityRecord,
  indexRids: (r) => [r.owner.rid],
};

export const RELOCATION_SCHEMA: ObjectRecordSchema<RelocationRecord> = {
  name: 'relocation',
  parse: parseRelocationRecord,
  // A move within one node is listed once.
  indexRids: (r) => [...new Set([r.source.rid, r.target.rid])],
};

const describeKey = (k: ObjectKey): string => `${k.kind} '${k.id}' of mesh '${k.mesh}'`;

/** The port over a backend: checks what goes in, parses what comes out, one way for every backend. */
export class ObjectRecordStore<R> implements VersionedStore<R> {
  constructor(
    protected readonly raw: RawObjectRecords,
    protected readonly schema: ObjectRecordSchema<R>,
  ) {}

  async get(key: ObjectKey): Promise<Versioned<R> | undefined> {
    const checked = this.checkKey(key);
    const { now, stored } = await this.raw.get(checked);
    return stored && this.read(checked, stored, now);
  }

  async compareAndSet(key: ObjectKey, expected: StoreVersion | 'absent', next: R): Promise<CasResult<R>> {
    const checked = this.checkKey(key);
    this.checkExpected(expected, checked, true);
    const record = this.schema.parse(next);
    if (!record) {
      throw new ZLinkError(
        'InvalidArgument',
        `${this.schema.name} of ${describeKey(checked)}: not a valid record`,
      );
    }
    const result = await this.raw.cas(
      checked,
      expected,
      JSON.stringify(record),
      this.schema.indexRids(record),
    );
    if (result.ok) return { ok: true, version: result.version as StoreVersion, writtenAt: result.now };
    return { ok: false, current: result.stored && this.read(checked, result.stored, result.now) };
  }

  async delete(key: ObjectKey, expected: StoreVersion): Promise<DeleteResult<R>> {
    const checked = this.checkKey(key);
    this.checkExpected(expected, checked, false);
    const result = await this.raw.cas(checked, expected, undefined, []);
    if (result.ok) return { ok: true };
    return { ok: false, current: result.stored && this.read(checked, result.stored, result.now) };
  }

  close(): Promise<void> {
    return this.raw.close();
  }

  /**
   * Records listed under NodeRid `rid`; one that cannot be read is left out, as `list` does for descriptors.
   */
  protected async listIndexed(mesh: string, rid: string): Promise<Versioned<R>[]> {
    if (typeof mesh !== 'string' || mesh === '' || typeof rid !== 'string' || rid === '') {
      throw new ZLinkError(
        'InvalidArgument',
        `${this.schema.name} list: mesh and NodeRid must be non-empty strings`,
      );
    }
    const { now, entries } = await this.raw.list(mesh, rid);
    const out: Versioned<R>[] = [];
    for (const { key, stored } of entries) {
      const record = this.decode(stored.body);
      if (record && this.schema.indexRids(record).includes(rid))
        out.push(this.versioned(key, record, stored, now));
    }
    return out;
  }

  protected read(key: ObjectKey, stored: RawRecord, now: number): Versioned<R> {
    const record = this.decode(stored.body);
    if (!record) {
      throw new ZLinkError(
        'ProtocolError',
        `${this.schema.name} of ${describeKey(key)}: the stored record cannot be read (version ${stored.version})`,
        { details: { key, version: stored.version } },
      );
    }
    return this.versioned(key, record, stored, now);
  }

  private versioned(key: ObjectKey, record: R, stored: RawRecord, readAt: number): Versioned<R> {
    return { key, record, version: stored.version, writtenAt: stored.writtenAt, readAt };
  }

  private decode(body: string): R | undefined {
    try {
      return this.schema.parse(JSON.parse(body));
    } catch {
      return undefined; // not JSON: not ours to read
    }
  }

  protected checkKey(key: ObjectKey): ObjectKey {
    const checked = parseObjectKey(key);
    if (!checked) {
      throw new ZLinkError(
        'InvalidArgument',
        `${this.schema.name}: a key is a non-empty mesh and id with kind 'spot' or 'actor'`,
      );
    }
    return checked;
  }

  protected checkExpected(expected: unknown, key: ObjectKey, absentAllowed: boolean): void {
    if (absentAllowed && expected === 'absent') return;
    if (typeof expected === 'number' && Number.isSafeInteger(expected) && expected > 0) return;
    const allowed = absentAllowed ? "a StoreVersion or 'absent'" : 'a StoreVersion';
    throw new ZLinkError(
      'InvalidArgument',
      `${this.schema.name} of ${describeKey(key)}: the expected version must be ${allowed}`,
    );
  }
}

/** The Authority Store over a backend. */
export class AuthorityRecords extends ObjectRecordStore<AuthorityRecord> implements AuthorityStore {
  constructor(raw: RawObjectRecords) {
    super(raw, AUTHORITY_SCHEMA);
  }

  async takeOver(
    key: ObjectKey,
    expected: StoreVersion,
    next: AuthorityRecord | undefined,
    previous: NodeRun,
  ): Promise<TakeoverResult> {
    const checked = this.checkKey(key);
    this.checkExpected(expected, checked, false);
    const record = next === undefined ? undefined : this.schema.parse(next);
    if (next !== undefined && !record)
      throw new ZLinkError('InvalidArgument', `authority of ${describeKey(checked)}: not a valid record`);
    const body = record && JSON.stringify(record);
    const result = await this.raw.cas(checked, expected, body, record ? [record.owner.rid] : [], [previous]);
    if (result.ok) return { ok: true, version: result.version, writtenAt: result.now };
    if (result.ownerAlive) return { ok: false, ownerAlive: true };
    return { ok: false, current: result.stored && this.read(checked, result.stored, result.now) };
  }

  listByOwner(mesh: string, ownerRid: string): Promise<Versioned<AuthorityRecord>[]> {
    return this.listIndexed(mesh, ownerRid);
  }
}

/** The Relocation Store over a backend. */
export class RelocationRecords extends ObjectRecordStore<RelocationRecord> implements RelocationStore {
  constructor(raw: RawObjectRecords) {
    super(raw, RELOCATION_SCHEMA);
  }

  listByNode(mesh: string, rid: string): Promise<Versioned<RelocationRecord>[]> {
    return this.listIndexed(mesh, rid);
  }
}
