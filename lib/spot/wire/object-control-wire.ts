import type { ObjectKind } from '../../core/kinds.js';
import {
  RecordKind,
  WIRE_VERSION,
  isBytes,
  isCorrelation,
  isCount,
  isName,
  isObjectKind,
  isStr,
  packr,
} from '../../core/wire/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import type { ObjectRef } from '../../core/objects/index.js';
import { type ObjectRouteFences, readObjectFences, writeObjectFences } from './object-fences.js';

/**
 * The object layer's control records beside its messages (docs/decisions.md "Object control
 * records"):
 *
 *     ObjectControl [1, 64, correlation, originRid, originGeneration, op, kind, id, type, objectGeneration, init | nil,
 *                    target | nil, timeoutMs | nil, ...later]
 *     ObjectStale   [1, 65, kind, id, fences, ...later]
 *
 * ObjectControl asks a node to create (`create`, `getOrCreate`: the node placement chose, which will own
 * it) or `destroy` (its owner; `objectGeneration` the ref's, 0 otherwise) one object. It is answered
 * like an ObjectRequest: an ObjectReply whose payload is the msgpack of the `ObjectRef`, or an
 * ObjectErrorReply. ObjectStale tells the sender of a one-way ObjectSend that the route it used is not
 * the owner's current one, so the sender drops exactly that cache entry (a request learns the same
 * from its error reply).
 */

export type ObjectControlOp = 'create' | 'getOrCreate' | 'destroy' | 'relocate';

export interface ObjectControlRecord {
  readonly kind: typeof RecordKind.ObjectControl;
  readonly correlation: number;
  readonly origin: NodeRun;
  readonly op: ObjectControlOp;
  readonly objectKind: ObjectKind;
  readonly id: string;
  readonly type: string;
  /** For `destroy`: the incarnation the ref names. */
  readonly objectGeneration: number;
  /** The msgpack of the `init` value given to `onActivate`; `undefined` when none was given. */
  readonly init: Uint8Array | undefined;
  /** For `relocate`: the NodeRid to move to (`undefined`: placement's pick). */
  readonly target: string | undefined;
  /** For `relocate`: the move's deadline until relay-ready. */
  readonly timeoutMs: number | undefined;
}

export interface ObjectStaleRecord {
  readonly kind: typeof RecordKind.ObjectStale;
  readonly objectKind: ObjectKind;
  readonly id: string;
  readonly fences: ObjectRouteFences;
}

export function encodeObjectControl(
  correlation: number,
  origin: NodeRun,
  op: ObjectControlOp,
  ref: {
    readonly kind: ObjectKind;
    readonly id: string;
    readonly type: string;
    readonly objectGeneration: number;
  },
  init: Uint8Array | undefined,
  move?: { readonly target: string | undefined; readonly timeoutMs: number },
): Uint8Array {
  return packr.pack([
    WIRE_VERSION,
    RecordKind.ObjectControl,
    correlation,
    origin.rid,
    origin.nodeGeneration,
    op,
    ref.kind,
    ref.id,
    ref.type,
    ref.objectGeneration,
    init ?? null,
    move?.target ?? null,
    move?.timeoutMs ?? null,
  ]);
}

export function encodeObjectStale(objectKind: ObjectKind, id: string, fences: ObjectRouteFences): Uint8Array {
  return packr.pack([WIRE_VERSION, RecordKind.ObjectStale, objectKind, id, writeObjectFences(fences)]);
}

/** The payload of the ObjectReply that answers an ObjectControl. */
export function encodeObjectRefPayload(ref: ObjectRef): Uint8Array {
  return packr.pack(objectRefItems(ref));
}

/** A ref as the items `parseObjectRef` reads (inside another answer, e.g. a move's outcome). */
export function objectRefItems(ref: ObjectRef): unknown[] {
  return [ref.kind, ref.type, ref.id, ref.objectGeneration, ref.mesh, ref.rid];
}

/** The ref an ObjectControl's reply carries (its decoded payload), frozen; `undefined` when it is not one. */
export function parseObjectRef(v: unknown): ObjectRef | undefined {
  if (!Array.isArray(v) || v.length < 6) return undefined;
  const [kind, type, id, objectGeneration, mesh, rid] = v as unknown[];
  if (!isObjectKind(kind) || !isName(type) || !isName(id) || !isCount(objectGeneration)) return undefined;
  if (!isName(mesh) || !isName(rid)) return undefined;
  return Object.freeze({ kind, type, id, objectGeneration, mesh, rid });
}

const OPS: readonly unknown[] = ['create', 'getOrCreate', 'destroy', 'relocate'];

/**
 * Reads an ObjectControl or ObjectStale (the bytes of one record); the reason it is malformed
 * otherwise. Never throws. Fields after the ones this version knows are ignored.
 */
export function decodeObjectControl(
  value: readonly unknown[],
): ObjectControlRecord | ObjectStaleRecord | string {
  if (value[1] === RecordKind.ObjectControl) {
    const [, , correlation, rid, nodeGeneration, op, objectKind, id, type, objectGeneration, init] = value;
    const target = value[11] ?? null;
    const timeoutMs = value[12] ?? null;
    if (
      value.length < 11 ||
      !isCorrelation(correlation) ||
      !isName(rid) ||
      !isStr(nodeGeneration) ||
      !isObjectKind(objectKind) ||
      !isName(id) ||
      !isName(type) ||
      !OPS.includes(op) ||
      !isCount(objectGeneration) ||
      (init !== null && !isBytes(init)) ||
      (target !== null && !isName(target)) ||
      (timeoutMs !== null && !isCount(timeoutMs))
    ) {
      return 'malformed object control record';
    }
    return {
      kind: RecordKind.ObjectControl,
      correlation,
      origin: { rid, nodeGeneration },
      op: op as ObjectControlOp,
      objectKind,
      id,
      type,
      objectGeneration,
      init: init ?? undefined,
      target: target ?? undefined,
      timeoutMs: timeoutMs ?? undefined,
    };
  }
  const [, , objectKind, id, rawFences] = value;
  const fences = readObjectFences(rawFences);
  if (value.length < 5 || !isObjectKind(objectKind) || !isName(id) || fences === undefined)
    return 'malformed object stale record';
  return { kind: RecordKind.ObjectStale, objectKind, id, fences };
}
