import { ZLinkError, toObjectWireError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import { decodePayload } from '../../core/wire/index.js';
import type { PendingRequests } from '../../core/calls/index.js';
import type { MeshLink, NodeRun } from '../../core/ports/index.js';
import type { ObjectRef } from '../../core/objects/index.js';
import {
  type ObjectControlOp,
  type ObjectControlRecord,
  encodeObjectControl,
  objectRefItems,
  parseObjectRef,
} from '../wire/index.js';
import { type ObjectHost, remoteAnswer } from '../owner/index.js';
import { askPeer } from './ask-peer.js';
import type { MemberPlacement, MoveRequest, Relocations, RelocationResult } from '../relocation/index.js';
import { CONTROL_TIMEOUT_MS, MOVE_ANSWER_SLACK_MS } from '../timing/index.js';

/** What asking a peer to create, destroy or move an object needs, and answering such a request. */
export interface ObjectControlDeps {
  readonly mesh: string;
  readonly self: NodeRun;
  readonly link: MeshLink;
  readonly pending: PendingRequests;
  readonly host: ObjectHost | undefined;
  readonly relocations: Relocations | undefined;
}

interface ControlTarget {
  readonly kind: ObjectKind;
  readonly id: string;
  readonly type: string;
  readonly objectGeneration: number;
}

/**
 * An ObjectControl request to `owner`, resolved with the decoded answer; ends as a request does
 * (`Timeout`, `RouteError`, the owner's refusal), `Unavailable` when `owner` is not a ready peer.
 */
function control(
  deps: ObjectControlDeps,
  owner: string,
  op: ObjectControlOp,
  ref: ControlTarget,
  init: Uint8Array | undefined,
  timeoutMs: number,
  what: string,
  move?: { readonly target: string | undefined; readonly timeoutMs: number },
): Promise<unknown> {
  return askPeer(
    deps,
    owner,
    (correlation) => encodeObjectControl(correlation, deps.self, op, ref, init, move),
    timeoutMs,
    what,
  );
}
/** Asks `owner` to create (or get-or-create) or destroy one object; answered by the object's ref. */
export async function controlObject(
  deps: ObjectControlDeps,
  owner: string,
  op: 'create' | 'getOrCreate' | 'destroy',
  ref: ControlTarget,
  init: Uint8Array | undefined,
  timeoutMs: number,
  what: string,
): Promise<ObjectRef> {
  const got = parseObjectRef(await control(deps, owner, op, ref, init, timeoutMs, what));
  if (!got) throw new ZLinkError('ProtocolError', `${what}: the owner's answer is not an object ref`);
  return got;
}

/**
 * Asks `owner` to move its object (`relocate`); answered by the move's outcome. The request waits
 * past the move's own deadline by the cutover it may still be in (a committed move is never lost to
 * the asker's timer: its outcome is read by whoever resolves the object next).
 */
export async function controlMove(
  deps: ObjectControlDeps,
  owner: string,
  req: MoveRequest,
  type: string,
  what: string,
): Promise<RelocationResult> {
  const ref = { kind: req.kind, id: req.id, type, objectGeneration: req.objectGeneration ?? 0 };
  const move = { target: req.target, timeoutMs: req.timeoutMs };
  const got = await control(
    deps,
    owner,
    'relocate',
    ref,
    undefined,
    req.timeoutMs + MOVE_ANSWER_SLACK_MS,
    what,
    move,
  );
  const result = parseRelocationResult(got);
  if (!result) throw new ZLinkError('ProtocolError', `${what}: the owner's answer is not a move outcome`);
  return result;
}

function parseRelocationResult(v: unknown): RelocationResult | undefined {
  const r = v as {
    outcome?: unknown;
    owner?: unknown;
    ref?: unknown;
    pauseMs?: unknown;
    code?: unknown;
    reason?: unknown;
    members?: unknown;
  } | null;
  const members = parseMembers(r?.members);
  if (members === null) return undefined;
  const withMembers = members === undefined ? {} : { members };
  if (r?.outcome === 'committed' && typeof r.owner === 'string' && typeof r.pauseMs === 'number') {
    const ref = parseObjectRef(r.ref);
    return ref && { outcome: 'committed', owner: r.owner, ref, pauseMs: r.pauseMs, ...withMembers };
  }
  if (r?.outcome === 'aborted' && typeof r.code === 'string' && typeof r.reason === 'string')
    return { outcome: 'aborted', code: r.code, reason: r.reason, ...withMembers };
  return undefined;
}

/** A moved Spot's member placements; `undefined` when absent, `null` when malformed. */
function parseMembers(v: unknown): MemberPlacement[] | undefined | null {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) return null;
  const out: MemberPlacement[] = [];
  for (const m of v as { id?: unknown; owner?: unknown; withSpot?: unknown }[]) {
    if (typeof m?.id !== 'string' || typeof m.owner !== 'string' || typeof m.withSpot !== 'boolean')
      return null;
    out.push({ id: m.id, owner: m.owner, withSpot: m.withSpot });
  }
  return out;
}

/** Runs an ObjectControl from a peer on this node's host; answers on the request's reply route. */
export function answerControl(deps: ObjectControlDeps, r: ObjectControlRecord): void {
  const { link, host, relocations, self } = deps;
  const answer = remoteAnswer(
    link,
    r.origin.rid,
    r.correlation,
    r.origin.nodeGeneration,
    r.op !== 'relocate',
  );
  if (!host || !relocations)
    return answer.error({ code: 'ObjectNotFound', message: `node '${self.rid}' hosts no objects` });
  if (r.op === 'relocate') {
    const req: MoveRequest = {
      kind: r.objectKind,
      id: r.id,
      objectGeneration: r.objectGeneration === 0 ? undefined : r.objectGeneration,
      target: r.target,
      timeoutMs: r.timeoutMs ?? CONTROL_TIMEOUT_MS,
    };
    relocations.move(req).then(
      (result) =>
        answer.ok(result.outcome === 'committed' ? { ...result, ref: objectRefItems(result.ref) } : result),
      (error: unknown) => answer.error(toObjectWireError(error)),
    );
    return;
  }
  let init: unknown;
  if (r.init !== undefined) {
    const decoded = decodePayload(r.init);
    if (!decoded.ok) return answer.error({ code: 'DecodeError', message: `init: ${decoded.reason}` });
    init = decoded.value;
  }
  const done: Promise<ObjectRef> =
    r.op === 'destroy'
      ? host.destroy({
          kind: r.objectKind,
          type: r.type,
          id: r.id,
          objectGeneration: r.objectGeneration,
          mesh: deps.mesh,
          rid: self.rid,
        })
      : host.activate(r.objectKind, r.type, r.id, r.op, init, CONTROL_TIMEOUT_MS);
  done.then(
    (ref) => answer.ok(ref),
    (error: unknown) => answer.error(toObjectWireError(error)),
  );
}
