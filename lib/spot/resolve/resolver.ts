import { invalidArgument } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import type { AuthorityRecord, AuthorityStore, ObjectKey, Versioned } from '../../core/ports/index.js';
import { wireAddress } from '../wire/index.js';
import type { Clock, OwnerLeaseView } from './owner-lease-view.js';
import type { ResolveResult, UnavailableReason } from './resolve-result.js';

export interface ResolverOptions {
  /** The MeshName of the one object mesh: every key this resolver reads is in it. */
  readonly mesh: string;
  readonly store: AuthorityStore;
  readonly leases: OwnerLeaseView;
  readonly clock: Clock;
}

/**
 * Reads one object's authority from the Authority Store and says what it is for a call by global id
 * (docs/protocol.md#resolving-a-global-id, docs/protocol.md#resolver-results). No cache: each `resolve` is
 * exactly one store `get`.
 */
export class AuthorityResolver {
  readonly mesh: string;

  constructor(private readonly options: ResolverOptions) {
    this.mesh = options.mesh;
  }

  /**
   * Resolves with one of the four closed results for (`kind`, `id`) of this mesh; never rejects for
   * anything the store does (a failed read is `StoreFailure`, with its error). Rejects with
   * `InvalidArgument` before reading when `kind` is not `spot`/`actor` or `id` is not a non-empty
   * string. Never creates, takes over or changes a record, and never parses the id for an owner
   * (docs/protocol.md#resolving-a-global-id: the framework never parses an id to find a node).
   */
  async resolve(kind: ObjectKind, id: string): Promise<ResolveResult> {
    if (kind !== 'spot' && kind !== 'actor') throw invalidArgument('kind', "must be 'spot' or 'actor'");
    if (typeof id !== 'string' || id === '') throw invalidArgument('id', 'must be a non-empty string');
    const key: ObjectKey = { mesh: this.mesh, kind, id };
    let stored: Versioned<AuthorityRecord> | undefined;
    try {
      stored = await this.options.store.get(key);
    } catch (error) {
      // docs/protocol.md#resolver-results: StoreFailure, the store could not say whether a record exists. An
      // unreadable record (ProtocolError) is one too: it is never taken for absent, which would
      // send the caller to creation over a live object.
      return { tag: 'StoreFailure', key, error };
    }
    // docs/protocol.md#resolver-results: Missing only once the release has completed; a completed release
    // deletes the record, so a record still there (even `releasing`) is never Missing.
    if (stored === undefined) return { tag: 'Missing', key };
    return this.judge(key, stored);
  }

  private judge(key: ObjectKey, stored: Versioned<AuthorityRecord>): ResolveResult {
    const { record } = stored;
    // docs/architecture.md#stores-and-authority: "Authority whose owner's lease is gone resolves Unavailable"
    // — whatever its state, and checked first: a creation or release whose owner is gone will not finish by
    // waiting; only an explicit create / get-or-create may take it over. The lease belongs to the node *run*:
    // a descriptor of the same NodeRid with another generation is another run
    // (docs/protocol.md#lifecycle-generations).
    const deadline = this.options.leases.admissionDeadline(record.owner);
    if (deadline === undefined || deadline <= this.options.clock.now())
      return unavailable(key, 'ownerLeaseGone', stored);
    // docs/protocol.md#resolving-a-global-id: only the current Ready authority is a route for an application
    // message; a record being built or released is there but not usable (and,
    // docs/protocol.md#resolver-results, not Missing).
    if (record.state !== 'ready') return unavailable(key, record.state, stored);
    // docs/protocol.md#the-route-cache: the route and every fence the owner judges admission by, kept
    // together.
    const fences = {
      owner: record.owner,
      objectGeneration: record.objectGeneration,
      authorityOwnerGeneration: record.authorityOwnerGeneration,
      ownerLeaseGeneration: record.ownerLeaseGeneration,
    };
    return {
      tag: 'ReadyRoute',
      key,
      type: record.type,
      ...fences,
      storeVersion: stored.version,
      admissionDeadline: deadline,
      address: wireAddress(key.kind, key.id, fences),
    };
  }
}

function unavailable(
  key: ObjectKey,
  reason: UnavailableReason,
  authority: Versioned<AuthorityRecord>,
): ResolveResult {
  return { tag: 'Unavailable', key, reason, authority };
}
