import { RecordKind, WIRE_VERSION, isStr, packr } from '../../core/wire/index.js';

/**
 * The barrier a draining object server closes behind (docs/decisions.md "Leaving a mesh without losing
 * a call"): it tells each peer it is leaving, and each peer drops its cached routes to it and answers.
 * A peer's answer travels behind everything that peer sent the node before, on the one ordered
 * connection, so once every answer is in, nothing sent on an old route is still on its way.
 *
 *     OwnerLeaving [1, 71, nodeGeneration, ...later]
 *     OwnerLeft    [1, 72, nodeGeneration, ...later]
 *
 * `nodeGeneration` is the leaving run's (its answer echoes it): an answer for an earlier run of the
 * same NodeRid is not this run's.
 */
export interface OwnerLeaveRecord {
  readonly kind: typeof RecordKind.OwnerLeaving | typeof RecordKind.OwnerLeft;
  readonly nodeGeneration: string;
}

export function encodeOwnerLeave(
  kind: typeof RecordKind.OwnerLeaving | typeof RecordKind.OwnerLeft,
  nodeGeneration: string,
): Uint8Array {
  return packr.pack([WIRE_VERSION, kind, nodeGeneration]);
}

/** Reads 71 or 72 (the record array); the reason it is malformed otherwise. Later fields are ignored. */
export function decodeOwnerLeave(value: readonly unknown[]): OwnerLeaveRecord | string {
  const [, kind, nodeGeneration] = value;
  if ((kind !== RecordKind.OwnerLeaving && kind !== RecordKind.OwnerLeft) || !isStr(nodeGeneration))
    return 'malformed owner leave record';
  return { kind, nodeGeneration };
}
