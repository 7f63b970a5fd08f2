import {
  type AuthorityRecord,
  type AuthorityStore,
  type NodeRun,
  type ObjectKey,
  type ObjectTypeMetrics,
  type StoreVersion,
  type Versioned,
  ZLinkError,
} from '../../core/index.js';
import type { Clock, OwnerLeaseView } from '../resolve/index.js';
import type { HeldAuthority } from './activation.js';

/** How long a creation waits between reads while another live owner builds or releases the object. */
const CONTENDED_WAIT_MS = [5, 10, 20, 40, 80, 100] as const;

export interface ClaimsConfig {
  readonly store: AuthorityStore;
  readonly self: NodeRun;
  readonly leases: OwnerLeaseView;
  readonly clock: Clock;
  /** Whether this node's own lease is fenced now: it then claims and commits nothing. */
  readonly fenced: () => boolean;
}

/** What a claim ended with: this node holds the creating record, or the object is already Ready elsewhere (or here). */
export type ClaimResult =
  | { readonly tag: 'claimed'; readonly version: StoreVersion; readonly tookOver: boolean }
  | { readonly tag: 'ready'; readonly stored: Versioned<AuthorityRecord> };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function fencedRefusal(what: string): ZLinkError {
  return new ZLinkError('Rejected', `${what}: the owner lease is fenced: no new object work`, {
    details: { reason: 'fenced' },
  });
}

/**
 * The Authority Store side of creation (DESIGN §7 "Decisions"): every step one compare-and-swap, so
 * of any number of nodes creating one id at once exactly one claims it. The claim is the `creating`
 * record; its StoreVersion becomes the new incarnation's ObjectGeneration (versions grow per mesh and
 * are never reused, so a later incarnation always has a larger one). Nothing here retries a write
 * that lost: it reads again and judges what is there.
 */
export class AuthorityClaims {
  constructor(private readonly config: ClaimsConfig) {}

  /**
   * Claims (`kind`, `id`) of `type` for this node: writes `creating` over an absent record, or over a
   * record whose owner holds no lease (a takeover: the owner is gone, only an explicit creation may
   * take it, never a call). Resolves `ready` when the object is Ready under a live owner (the caller
   * decides: `create` refuses, get-or-create uses it); waits while a live owner is still creating or
   * releasing it. Ends `InvalidOperation` when the id is taken by another type, `Rejected` while this
   * node is fenced, `Unavailable` at the deadline (`details.resolver: 'StoreFailure'` when the store
   * did not answer).
   */
  async claim(
    key: ObjectKey,
    type: string,
    deadline: number,
    metrics: ObjectTypeMetrics,
    what: string,
  ): Promise<ClaimResult> {
    const { store, clock } = this.config;
    for (let attempt = 0; ; attempt++) {
      if (this.config.fenced()) throw fencedRefusal(what);
      let stored: Versioned<AuthorityRecord> | undefined;
      try {
        metrics.storeReads++;
        stored = await store.get(key);
      } catch (error) {
        await this.pause(attempt, deadline, what, 'StoreFailure', error);
        continue;
      }
      if (stored === undefined) {
        const cas = await this.write(key, 'absent', creating(type, this.config.self));
        if (cas !== undefined) return { tag: 'claimed', version: cas, tookOver: false };
        continue;
      }
      const { record } = stored;
      if (record.type !== type) {
        throw new ZLinkError(
          'InvalidOperation',
          `${what}: id '${key.id}' is taken by ${key.kind} type '${record.type}'`,
          {
            details: { reason: 'otherType', type: record.type },
          },
        );
      }
      if (!this.live(record.owner)) {
        const cas = await this.write(key, stored.version, creating(type, this.config.self));
        if (cas !== undefined) return { tag: 'claimed', version: cas, tookOver: true };
        continue;
      }
      if (record.state === 'ready') return { tag: 'ready', stored };
      if (clock.now() >= deadline) {
        throw new ZLinkError(
          'Unavailable',
          `${what}: the object stayed '${record.state}' until the deadline`,
          {
            details: { reason: record.state },
          },
        );
      }
      await this.pause(attempt, deadline, what, record.state);
    }
  }

  /**
   * Makes a claimed record Ready with `held`'s generations: the commit of a creation. `undefined` when
   * the record is no longer the claimed version (another node took it meanwhile); `Rejected` while
   * fenced, writing nothing.
   */
  async commit(
    key: ObjectKey,
    type: string,
    claimed: StoreVersion,
    held: Omit<HeldAuthority, 'storeVersion'>,
    what: string,
  ): Promise<StoreVersion | undefined> {
    if (this.config.fenced()) throw fencedRefusal(what);
    return this.write(key, claimed, { ...record(type, this.config.self, held), state: 'ready' });
  }

  /** Marks a held record `releasing` (`undefined`: it is not the held version any more). */
  releasing(key: ObjectKey, type: string, held: HeldAuthority): Promise<StoreVersion | undefined> {
    return this.write(key, held.storeVersion, {
      ...record(type, this.config.self, held),
      state: 'releasing',
    });
  }

  /** Deletes the record at `version`; a failure leaves it for a takeover once this node's lease is gone. */
  async remove(key: ObjectKey, version: StoreVersion): Promise<boolean> {
    try {
      return (await this.config.store.delete(key, version)).ok;
    } catch {
      return false;
    }
  }

  /** Whether node run `owner` may still hold objects: this node unless fenced, another while its lease is live. */
  live(owner: NodeRun): boolean {
    const { self, leases, clock } = this.config;
    if (owner.rid === self.rid && owner.nodeGeneration === self.nodeGeneration) return !this.config.fenced();
    const until = leases.admissionDeadline(owner);
    return until !== undefined && until > clock.now();
  }

  private async write(
    key: ObjectKey,
    expected: StoreVersion | 'absent',
    next: AuthorityRecord,
  ): Promise<StoreVersion | undefined> {
    try {
      const cas = await this.config.store.compareAndSet(key, expected, next);
      return cas.ok ? cas.version : undefined;
    } catch {
      // Whether it was written is unknown: the next read says (a claim that did land is seen as ours
      // only by version, so it is left to lapse with this node's lease rather than guessed at).
      return undefined;
    }
  }

  private async pause(
    attempt: number,
    deadline: number,
    what: string,
    reason: string,
    cause?: unknown,
  ): Promise<void> {
    const left = deadline - this.config.clock.now();
    if (left <= 0) {
      throw new ZLinkError(
        'Unavailable',
        `${what}: ${reason === 'StoreFailure' ? 'the Authority Store did not answer' : `the object stayed '${reason}'`} until the deadline`,
        { cause, details: reason === 'StoreFailure' ? { resolver: 'StoreFailure' } : { reason } },
      );
    }
    const step = CONTENDED_WAIT_MS[Math.min(attempt, CONTENDED_WAIT_MS.length - 1)] as number;
    await sleep(Math.min(step, left));
  }
}

function creating(type: string, owner: NodeRun): AuthorityRecord {
  // The incarnation's generations are set at commit; a creating record is never a route (§2.1).
  return {
    type,
    state: 'creating',
    owner,
    objectGeneration: 0,
    authorityOwnerGeneration: 0,
    ownerLeaseGeneration: 0,
  };
}

function record(type: string, owner: NodeRun, held: Omit<HeldAuthority, 'storeVersion'>): AuthorityRecord {
  return {
    type,
    state: 'ready',
    owner,
    objectGeneration: held.objectGeneration,
    authorityOwnerGeneration: held.authorityOwnerGeneration,
    ownerLeaseGeneration: held.ownerLeaseGeneration,
  };
}
