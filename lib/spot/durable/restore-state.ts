import { ZLinkError, errorMessage, userCodeError } from '../../core/errors.js';
import type { NodeRun, ObjectKey, SavedState } from '../../core/ports/index.js';
import type { NormalizedPersistOptions, ZLinkRestoredState } from '../../core/objects/index.js';
import { decodePayload } from '../../core/wire/index.js';
import { CONTENDED_WAIT_MS } from '../timing/index.js';
import type { StateBatcher } from './state-batcher.js';
import type { DurableTimer } from '../execution/index.js';
import { decodeTimers } from './state-rows.js';

/** What an adopt gave a new activation: where it writes from, and the state to restore, if any. */
export interface AdoptedState {
  readonly epoch: number;
  readonly version: number;
  /** What the row holds (to tell an unchanged first capture): its state and durable timers' bytes. */
  readonly stored: { readonly state: Uint8Array | undefined; readonly timers: Uint8Array | undefined };
  /** The durable timers saved with the state, to arm again. */
  readonly timers: readonly DurableTimer[];
  /** The saved state, decoded and migrated to the class's version; set with `restored`. */
  readonly state: unknown;
  /** What `onActivate` is told: `undefined` when there was nothing to restore. */
  readonly restored: ZLinkRestoredState | undefined;
}

/** Who adopts: the claim that made this incarnation. */
export interface AdoptClaim {
  readonly key: ObjectKey;
  readonly type: string;
  readonly objectGeneration: number;
  readonly owner: NodeRun;
  readonly persist: NormalizedPersistOptions;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The restore every activation of a persistent class starts with (docs/decisions.md#durable-state): an
 * adopt, which fences every earlier owner's writes, and the saved state decoded and brought up to the
 * class's `persist.version` through `migrate`. Tried again while the store does not answer, until
 * `deadline`; then `Unavailable` (`details.reason: 'stateStoreFailure'`). A claim a newer one overtook
 * ends `Unavailable` (`'overtaken'`); a row no reader takes `ProtocolError`; state of a newer schema, or
 * an older one with no `migrate`, `InvalidOperation`; what `migrate` throws `userCodeError`.
 */
export async function adoptState(
  batcher: StateBatcher,
  claim: AdoptClaim,
  deadline: number,
  now: () => number,
  what: string,
): Promise<AdoptedState> {
  const request = {
    key: claim.key,
    type: claim.type,
    objectGeneration: claim.objectGeneration,
    owner: claim.owner,
  };
  for (let attempt = 0; ; attempt++) {
    let result;
    try {
      result = await batcher.adopt(request);
    } catch (error) {
      const left = deadline - now();
      if (left <= 0)
        throw new ZLinkError(
          'Unavailable',
          `${what}: ${batcher.store.name} did not answer its restore until the deadline: ${errorMessage(error)}`,
          { cause: error, details: { reason: 'stateStoreFailure' } },
        );
      await sleep(
        Math.min(CONTENDED_WAIT_MS[Math.min(attempt, CONTENDED_WAIT_MS.length - 1)] as number, left),
      );
      continue;
    }
    if (result.ok) return restoredFrom(result.saved, claim, what);
    if (result.reason === 'newerOwner')
      throw new ZLinkError(
        'Unavailable',
        `${what}: a newer claim (generation ${result.objectGeneration}) adopted its state first`,
        { details: { reason: 'overtaken' } },
      );
    throw result.error;
  }
}

function restoredFrom(saved: SavedState, claim: AdoptClaim, what: string): AdoptedState {
  const { epoch, version, state: bytes } = saved;
  const stored = { state: bytes, timers: saved.timers };
  if (bytes === undefined)
    return { epoch, version, stored, timers: [], state: undefined, restored: undefined };
  const decoded = decodePayload(bytes);
  if (!decoded.ok)
    throw new ZLinkError('ProtocolError', `${what}: its saved state (version ${version}): ${decoded.reason}`);
  const timers = decodeTimers(saved.timers);
  if (timers === undefined)
    throw new ZLinkError(
      'ProtocolError',
      `${what}: the durable timers saved with version ${version} are malformed`,
    );
  const state = migrated(decoded.value, saved.schemaVersion, claim.persist, what);
  const restored = Object.freeze({ version, schemaVersion: saved.schemaVersion, savedAt: saved.savedAt });
  return { epoch, version, stored, timers, state, restored };
}

/** `state`, saved under schema `from`, brought up to `persist.version` one version at a time. */
function migrated(state: unknown, from: number, persist: NormalizedPersistOptions, what: string): unknown {
  if (from === persist.version) return state;
  if (from > persist.version)
    throw new ZLinkError(
      'InvalidOperation',
      `${what}: its state was saved under schema version ${from}, newer than this class's persist.version ${persist.version}`,
      { details: { reason: 'newerSchema', schemaVersion: from } },
    );
  if (persist.migrate === undefined)
    throw new ZLinkError(
      'InvalidOperation',
      `${what}: its state was saved under schema version ${from} and the class (persist.version ${persist.version}) has no persist.migrate`,
      { details: { reason: 'noMigrate', schemaVersion: from } },
    );
  let value = state;
  for (let v = from; v < persist.version; v++) {
    try {
      value = persist.migrate(value, v);
    } catch (error) {
      throw userCodeError(error, `${what}: persist.migrate(state, ${v})`);
    }
  }
  return value;
}
