import { ZLinkError, userCodeError } from '../../core/errors.js';
import { encodeFrameworkFields, encodePayload } from '../../core/wire/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import {
  type ObjectAddress,
  type RelocationImage,
  type TimerImage,
  encodeObjectRequest,
  encodeObjectSend,
  encodeSpotEvent,
  packSessionStamp,
} from '../wire/index.js';
import type { TimerSnapshot } from '../execution/index.js';
import { type Activation, heldRoute, type InboundObjectCall, userCode } from '../owner/index.js';

/**
 * The source's seal and capture of a move (docs/protocol.md#relocation-steps; docs/decisions.md "Relocation
 * flow"): the object's turns are sealed after the one running, then its state (`capture()`), the
 * calls waiting in its queue and its timers are read into one image. Nothing is taken away: while
 * sealed no turn starts and no timer fires, so the image stays true until the move ends. A move that
 * aborts unseals (`turns.unseal()`) and the object goes on as if nothing happened; a committed one
 * hands the queue off (`turns.handOff()`), whose calls the new owner then answers.
 */

/**
 * Seals `a` and reads its image (`undefined` when `wanted` says no once sealed). Rejects with `Unavailable`
 * when the object is not open (closed, or sealed by another move) and with `userCodeError` when `capture()`
 * throws or returns what msgpack cannot hold — the seal stays; the caller aborts the move, which unseals.
 */
export async function captureActivation(
  a: Activation,
  self: NodeRun,
  /** Asked once the running turn ended: `false` (the move was given up meanwhile) skips `capture()`. */
  wanted: () => boolean = () => true,
): Promise<RelocationImage | undefined> {
  const what = `relocate ${a.cls.kind} '${a.key.id}'`;
  if (a.turns.state !== 'open')
    throw new ZLinkError('Unavailable', `${what}: the object is ${a.turns.state}`, {
      details: { reason: a.turns.state },
    });
  await a.turns.seal();
  if (!wanted()) return undefined;
  const captured = await userCode(`${what}: capture()`, () => a.hook('capture'));
  // A persistent object's state is in the store before it leaves: every reply held on a write is
  // answered here, and the target writes on from the version the store holds (the epoch moves with it).
  const d = a.durable;
  if (d !== undefined) {
    if (d.mode === 'explicit') d.capture(captured);
    await d.flushed();
  }
  let state: Uint8Array | undefined;
  if (a.cls.hooks.capture) {
    try {
      state = encodePayload(captured);
    } catch (error) {
      throw userCodeError(error, `${what}: capture() returned what msgpack cannot hold`);
    }
  }
  const source = heldRoute(a, self);
  return {
    objectKind: a.key.kind,
    id: a.key.id,
    type: a.cls.type,
    objectGeneration: a.authority.objectGeneration,
    source,
    state,
    queued: (a.turns.queuedWork() as InboundObjectCall[]).map((call) => callRecord(call)),
    timers: a.turns.timers.pending().map(timerImage),
    storeVersion: a.authority.storeVersion,
    membership: a.membership.image(),
    sessions: a.sessions?.image() ?? [],
    events: a.eventOrder?.image() ?? [],
    ...(d !== undefined && { durable: d.handover() }),
  };
}

/**
 * A waiting call as the record it would arrive as, its reply route and hops kept: the target reads it
 * as any call. One that came off the wire is that record already, and goes as it came.
 */
export function callRecord(call: InboundObjectCall): Uint8Array {
  const { event, wire } = call;
  if (wire !== undefined && event === undefined) return wire;
  if (event !== undefined) {
    const { channel, topic, publisherRid, from } = event.info;
    const carried = { publisherRid, publisherGeneration: event.publisherGeneration, spotId: call.id };
    return encodeSpotEvent(channel, topic, call.packet, event.seq, from, call.payload, carried);
  }
  return encodeCall(call, { objectKind: call.objectKind, id: call.id, fences: call.fences }, call.hops);
}

/**
 * A call as the send or request record its sender would write to `to`, after `hops` relays: the form a
 * call made in this process takes when a move carries it or Message Follow relays it.
 */
export function encodeCall(call: InboundObjectCall, to: ObjectAddress, hops: number): Uint8Array {
  const fields = call.trace && encodeFrameworkFields(call.trace.traceparent, call.trace.tracestate);
  const { operationId, packet, metadata, payload } = call;
  const stamp = call.session && packSessionStamp(call.session);
  return call.correlation !== undefined && call.origin !== undefined
    ? encodeObjectRequest(
        call.correlation,
        call.origin,
        to,
        operationId,
        packet,
        metadata,
        payload,
        fields,
        hops,
        stamp,
      )
    : encodeObjectSend(to, operationId, packet, metadata, payload, fields, hops, stamp);
}

function timerImage(t: TimerSnapshot): TimerImage {
  const image = { kind: t.kind, label: t.label, dueInMs: t.dueInMs, intervalMs: t.intervalMs };
  return t.durable ? { ...image, durable: true } : image;
}
