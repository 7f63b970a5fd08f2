import { ZLinkError } from '../../core/errors.js';
import type { ObjectTypeMetrics } from '../../core/observe/index.js';
import type {
  AuthorityRecord,
  AuthorityStore,
  NodeRun,
  ObjectKey,
  StoreVersion,
  Versioned,
} from '../../core/ports/index.js';
import { type OwnerLiveness, confirmedLive } from '../resolve/index.js';
import type { HeldAuthority } from './activation.js';
import { CONTENDED_WAIT_MS, RELEASE_RETRY_MS } from '../timing/index.js';

export interface ClaimsConfig extends OwnerLiveness {
  readonly store: AuthorityStore;
  readonly self: NodeRun;
  /** Whether this node's own lease is fenced now: it then claims and commits nothing. */
  readonly fenced: () => boolean;
  /**
   * Whether this node holds (or is creating) the object of `key`: a record of its own run it does not hold is
   * a leftover.
   */
  readonly holds: (key: ObjectKey) => boolean;
}

/**
 * What a claim ended with: this node holds the creating record, or the object is already Ready elsewhere (or
 * here).
 */
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
 * The Authority Store side of creation (docs/architecture.md#stores-and-authority): every step one
 * compare-and-swap, so of any number of nodes creating one id at once exactly one claims it. The claim is the
 * `creating` record; its StoreVersion becomes the new incarnation's ObjectGeneration (versions grow per mesh
 * and are never reused, so a later incarnation always has a larger one). Nothing here retries a write that
 * lost: it reads again and judges what is there.
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
        const written = await this.write(key, 'absent', creating(type, this.config.self));
        const version = await this.claimed(written, attempt, deadline, what);
        if (version !== undefined) return { tag: 'claimed', version, tookOver: false };
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
      // An owner this node cannot confirm live (its lease or its link is not, here) is asked of the
      // store, atomically with the write: it refuses while the owner's lease is live there. So a
      // killed owner is taken over as soon as the store let its lease go, even if this node's view
      // of leases has not been read since — never answered as a ref to that dead owner.
      // A record of this very run that nothing here holds is left over from a write whose outcome was
      // unknown (a commit that landed after its caller gave up): nobody else may take it while this
      // run lives, so this run reclaims it.
      if (this.ownRun(record.owner) && !this.config.holds(key)) {
        const written = await this.write(key, stored.version, creating(type, this.config.self));
        const version = await this.claimed(written, attempt, deadline, what);
        if (version !== undefined) return { tag: 'claimed', version, tookOver: true };
        continue;
      }
      if (!this.ownRun(record.owner) && !this.confirmed(record.owner)) {
        const taken = await this.takeOver(
          key,
          stored.version,
          creating(type, this.config.self),
          record.owner,
        );
        if (typeof taken === 'number') return { tag: 'claimed', version: taken, tookOver: true };
        if (taken === 'mismatch') continue;
        // Unknown whether the owner lives: never answer with its ref on a guess, read again.
        if (taken === 'failed') {
          await this.pause(attempt, deadline, what, 'StoreFailure');
          continue;
        }
        // The owner is alive after all: judge the record as a live owner's.
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
    const written = await this.write(key, claimed, {
      ...record(type, this.config.self, held),
      state: 'ready',
    });
    return typeof written === 'number' ? written : undefined;
  }

  /**
   * Marks a held record `releasing`: its new version, `notOurs` when it is not the held version any
   * more, `failed` when the store did not answer, tried again for up to `RELEASE_RETRY_MS`.
   */
  releasing(key: ObjectKey, type: string, held: HeldAuthority): Promise<StoreVersion | 'notOurs' | 'failed'> {
    const next: AuthorityRecord = { ...record(type, this.config.self, held), state: 'releasing' };
    return this.persistently(async () => {
      const cas = await this.config.store.compareAndSet(key, held.storeVersion, next);
      return cas.ok ? cas.version : 'notOurs';
    });
  }

  /**
   * Deletes the record at `version` (tried again as `releasing` is); `notOurs` when another version is there.
   */
  remove(key: ObjectKey, version: StoreVersion): Promise<'removed' | 'notOurs' | 'failed'> {
    return this.persistently(async () =>
      (await this.config.store.delete(key, version)).ok ? 'removed' : 'notOurs',
    );
  }

  /**
   * A release's write: it must land, or its caller must know it did not (a record left behind is a ghost).
   */
  private async persistently<T>(write: () => Promise<T>): Promise<T | 'failed'> {
    const until = this.config.clock.now() + RELEASE_RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await write();
      } catch {
        const left = until - this.config.clock.now();
        if (left <= 0) return 'failed';
        await sleep(
          Math.min(CONTENDED_WAIT_MS[Math.min(attempt, CONTENDED_WAIT_MS.length - 1)] as number, left),
        );
      }
    }
  }

  /** A takeover through the store's own lease check: the new version, or why not. */
  private async takeOver(
    key: ObjectKey,
    expected: StoreVersion,
    next: AuthorityRecord,
    previous: NodeRun,
  ): Promise<StoreVersion | 'ownerAlive' | 'mismatch' | 'failed'> {
    try {
      const result = await this.config.store.takeOver(key, expected, next, previous);
      if (result.ok) return result.version ?? 'mismatch';
      return result.ownerAlive ? 'ownerAlive' : 'mismatch';
    } catch {
      // Whether it landed is unknown: the next read says (a landed claim is this run's, reclaimed then).
      return 'failed';
    }
  }

  private ownRun(owner: NodeRun): boolean {
    const { self } = this.config;
    return owner.rid === self.rid && owner.nodeGeneration === self.nodeGeneration;
  }

  /** Whether another node's run `owner` is live by what this node knows now (`confirmedLive`). */
  private confirmed(owner: NodeRun): boolean {
    return confirmedLive(owner, this.config);
  }

  private async write(
    key: ObjectKey,
    expected: StoreVersion | 'absent',
    next: AuthorityRecord,
  ): Promise<StoreVersion | 'mismatch' | 'failed'> {
    try {
      const cas = await this.config.store.compareAndSet(key, expected, next);
      return cas.ok ? cas.version : 'mismatch';
    } catch {
      // Whether it was written is unknown: the next read says, and a write of this run's that did land
      // is reclaimed as a leftover (see `claim`).
      return 'failed';
    }
  }

  /** What a claim's write means for its loop: claimed, read again now, or read again after a pause. */
  private async claimed(
    written: StoreVersion | 'mismatch' | 'failed',
    attempt: number,
    deadline: number,
    what: string,
  ): Promise<StoreVersion | undefined> {
    if (typeof written === 'number') return written;
    if (written === 'failed') await this.pause(attempt, deadline, what, 'StoreFailure');
    return undefined;
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
  // The incarnation's generations are set at commit; a creating record is never a route
  // (docs/protocol.md#resolver-results).
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
