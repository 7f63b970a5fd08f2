import { Buffer } from 'node:buffer';
import {
  RecordKind,
  WIRE_VERSION,
  isBytes,
  isName,
  isStr,
  msgpackWrite as write,
  packr,
} from '../../core/wire/index.js';
import { type ObjectRouteFences, readObjectFences, writeObjectFences } from './object-fences.js';

/**
 * The records of a move after its image (docs/decisions.md "Relocation records"), each naming its
 * relocationId, all on the one ordered connection between source and target:
 *
 *     RelocationReady  [1, 67, relocationId, refusal | nil, ...later]              target → source
 *     RelocationRelay  [1, 68, relocationId, record, ...later]                     source → target
 *     RelocationCutover [1, 70, relocationId, refusal | nil, ...later]             source → target
 *     RelocationCommit [1, 69, relocationId, targetFences | nil, refusal | nil, ...later]  target → source
 *     refusal = [code, message]
 *
 * Ready without a refusal: the object is restored on the target (not yet dispatching) and the source relays
 * what it holds. A relay carries one call as the ObjectSend or ObjectRequest record it is (its reply route
 * inside). Cutover without a refusal: every held call was relayed before it, so the target may take the
 * authority; with one, the source gave the move up (its deadline) and the target drops what it restored — the
 * target never takes the authority without this go. Commit with fences: the target's CAS of the authority
 * landed and it dispatches on that route; with a refusal: the move ended without it.
 */

/** Why a step was refused: a `ZLinkError` code and a message for people. */
export interface RelocationRefusal {
  readonly code: string;
  readonly message: string;
}

export interface RelocationReadyRecord {
  readonly kind: typeof RecordKind.RelocationReady;
  readonly relocationId: string;
  readonly refusal: RelocationRefusal | undefined;
}

export interface RelocationRelayRecord {
  readonly kind: typeof RecordKind.RelocationRelay;
  readonly relocationId: string;
  /** One ObjectSend or ObjectRequest record. */
  readonly record: Uint8Array;
}

export type RelocationCommitRecord =
  | {
      readonly kind: typeof RecordKind.RelocationCommit;
      readonly relocationId: string;
      readonly target: ObjectRouteFences;
      readonly refusal?: undefined;
    }
  | {
      readonly kind: typeof RecordKind.RelocationCommit;
      readonly relocationId: string;
      readonly target?: undefined;
      readonly refusal: RelocationRefusal;
    };

export interface RelocationCutoverRecord {
  readonly kind: typeof RecordKind.RelocationCutover;
  readonly relocationId: string;
  readonly refusal: RelocationRefusal | undefined;
}

export type RelocationStepRecord =
  RelocationReadyRecord | RelocationRelayRecord | RelocationCutoverRecord | RelocationCommitRecord;

const refusalItem = (r: RelocationRefusal | undefined): unknown =>
  r === undefined ? null : [r.code, r.message];

export function encodeRelocationReady(relocationId: string, refusal?: RelocationRefusal): Uint8Array {
  return packr.pack([WIRE_VERSION, RecordKind.RelocationReady, relocationId, refusalItem(refusal)]);
}

export function encodeRelocationCutover(relocationId: string, refusal?: RelocationRefusal): Uint8Array {
  return packr.pack([WIRE_VERSION, RecordKind.RelocationCutover, relocationId, refusalItem(refusal)]);
}

/** Written by hand, as msgpackr would: a move relays every call it held, one after the other. */
export function encodeRelocationRelay(relocationId: string, record: Uint8Array): Uint8Array {
  const n = write.utf8Length(relocationId);
  const out = Buffer.allocUnsafe(3 + write.strSize(n) + write.binSize(record));
  const at = write.str(out, write.head(out, 4, WIRE_VERSION, RecordKind.RelocationRelay), relocationId, n);
  write.bin(out, at, record);
  return out;
}

/** Committed on `outcome` (the target's route fences), or aborted with a refusal. */
export function encodeRelocationCommit(
  relocationId: string,
  outcome: { readonly target: ObjectRouteFences } | { readonly refusal: RelocationRefusal },
): Uint8Array {
  const target = 'target' in outcome ? writeObjectFences(outcome.target) : null;
  const refusal = 'refusal' in outcome ? refusalItem(outcome.refusal) : null;
  return packr.pack([WIRE_VERSION, RecordKind.RelocationCommit, relocationId, target, refusal]);
}

function readRefusal(v: unknown): RelocationRefusal | undefined | false {
  if (v === null) return undefined;
  if (!Array.isArray(v) || v.length < 2 || !isStr(v[0]) || !isStr(v[1])) return false;
  return { code: v[0], message: v[1] };
}

/** Reads record 67, 68, 69 or 70 (the record array); the reason it is malformed otherwise. Never throws. */
export function decodeRelocationStep(value: readonly unknown[]): RelocationStepRecord | string {
  const [, kind, relocationId] = value;
  if (!isName(relocationId)) return 'malformed relocation record: no relocationId';
  if (kind === RecordKind.RelocationReady || kind === RecordKind.RelocationCutover) {
    const refusal = value.length < 4 ? false : readRefusal(value[3]);
    if (refusal === false) return 'malformed relocation ready or cutover record';
    return { kind, relocationId, refusal };
  }
  if (kind === RecordKind.RelocationRelay) {
    const record = value[3];
    if (value.length < 4 || !isBytes(record)) return 'malformed relocation relay record';
    return { kind, relocationId, record };
  }
  if (value.length < 5) return 'malformed relocation commit record';
  const refusal = readRefusal(value[4]);
  if (refusal === false) return 'malformed relocation commit record';
  if (refusal !== undefined) return { kind: RecordKind.RelocationCommit, relocationId, refusal };
  const target = readObjectFences(value[3]);
  if (target === undefined) return 'malformed relocation commit record';
  return { kind: RecordKind.RelocationCommit, relocationId, target };
}
