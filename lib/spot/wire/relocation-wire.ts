import { Buffer } from 'node:buffer';
import { crc32 } from 'node:zlib';
import type { ObjectKind } from '../../core/kinds.js';
import {
  RecordKind,
  WIRE_VERSION,
  isBytes,
  isCount,
  isName,
  isObjectKind,
  isStr,
  packr,
} from '../../core/wire/index.js';
import { type ObjectRouteFences, readObjectFences, writeObjectFences } from './object-fences.js';

/**
 * What a moving object takes with it (docs/protocol.md#relocation-records, docs/decisions.md "Relocation
 * records"): its state, the turns that were waiting and its timers, as one image that the source sends
 * the target over the mesh — never through a store — in chunks, each within the message bound, with a
 * checksum of the whole:
 *
 *     RelocationChunk [1, 66, relocationId, seq, total, checksum, bytes, ...later]
 *     image = [kind, id, type, objectGeneration, sourceFences, state | nil, [record...], [timer...],
 *              storeVersion, membership?, sessions?, events?, ...later]
 *     timer = [kind, label | nil, dueInMs, intervalMs | nil]
 *     membership = [spotId | nil, [[actorId, objectGeneration]...]]
 *     sessions   = [[ownerRid, ownerGeneration, listener, sessionId, bindingGeneration]...]   (an Actor's bindings)
 *     events     = [[publisherGeneration, seq]...]   (a subscribed Spot's place in each publisher's events)
 *
 * `checksum` is the CRC-32 of the whole image; a waiting turn travels as the ObjectSend or
 * ObjectRequest record it is (reply route included), so the target reads it as it reads any call.
 */

/** Spot membership as it moves: an Actor's Spot, a Spot's members (each with the incarnation that joined). */
export interface MembershipImage {
  readonly spot: string | undefined;
  readonly members: readonly (readonly [string, number])[];
}

const NO_MEMBERSHIP: MembershipImage = Object.freeze({ spot: undefined, members: Object.freeze([]) });

/** A timer as it moves: the callback stays behind, its label tells the target which to set again. */
export interface TimerImage {
  readonly kind: 'timeout' | 'interval';
  readonly label: string | undefined;
  /** Until its next firing when it was captured; 0 for one that was due. */
  readonly dueInMs: number;
  readonly intervalMs: number | undefined;
  /** Armed `{ durable: true }`: saved with a persistent object's state (absent on older senders). */
  readonly durable?: true;
}

export interface RelocationImage {
  readonly objectKind: ObjectKind;
  readonly id: string;
  readonly type: string;
  readonly objectGeneration: number;
  /** The route the source held the object on (what Message Follow will relay from). */
  readonly source: ObjectRouteFences;
  /** The msgpack of what `capture()` returned; `undefined` when the class has no `capture`. */
  readonly state: Uint8Array | undefined;
  /** The turns that were waiting, in order, each the call record it arrived as. */
  readonly queued: readonly Uint8Array[];
  readonly timers: readonly TimerImage[];
  /** The authority record's version as the source holds it: the target's CAS expects it. */
  readonly storeVersion: number;
  readonly membership: MembershipImage;
  /** An Actor's session bindings: they move with it (a Spot's, and an older sender's, are empty). */
  readonly sessions: readonly BindingImage[];
  /** A subscribed Spot's last event run from each publishing run (see `EventOrder`); empty otherwise. */
  readonly events: readonly (readonly [string, number])[];
  /**
   * A persistent object's place in its State Store: the target writes on with this epoch, replacing
   * this version (a move hands the epoch over, docs/decisions.md#durable-state); absent otherwise.
   */
  readonly durable?: { readonly epoch: number; readonly version: number };
}

/** One session binding as it moves with its Actor. */
export interface BindingImage {
  readonly ownerRid: string;
  readonly ownerGeneration: string;
  readonly listener: string;
  readonly sessionId: string;
  readonly bindingGeneration: number;
}

export interface RelocationChunkRecord {
  readonly kind: typeof RecordKind.RelocationChunk;
  readonly relocationId: string;
  /** 0-based place of this chunk among `total`. */
  readonly seq: number;
  readonly total: number;
  /** CRC-32 of the whole image. */
  readonly checksum: number;
  readonly bytes: Uint8Array;
}

export function encodeRelocationImage(image: RelocationImage): Uint8Array {
  return new Uint8Array(
    packr.pack([
      image.objectKind,
      image.id,
      image.type,
      image.objectGeneration,
      writeObjectFences(image.source),
      image.state ?? null,
      image.queued,
      image.timers.map((t) =>
        t.durable
          ? [t.kind, t.label ?? null, t.dueInMs, t.intervalMs ?? null, true]
          : [t.kind, t.label ?? null, t.dueInMs, t.intervalMs ?? null],
      ),
      image.storeVersion,
      [image.membership.spot ?? null, image.membership.members],
      image.sessions.map((b) => [
        b.ownerRid,
        b.ownerGeneration,
        b.listener,
        b.sessionId,
        b.bindingGeneration,
      ]),
      image.events,
      image.durable ? [image.durable.epoch, image.durable.version] : null,
    ]),
  );
}

const BAD_IMAGE = 'malformed relocation image';

/** The image in `bytes`, or the reason it is not one. Never throws; later fields are ignored. */
export function decodeRelocationImage(bytes: Uint8Array): RelocationImage | string {
  let v: unknown;
  try {
    v = packr.unpack(bytes);
  } catch (e) {
    return `${BAD_IMAGE}: ${(e as Error).message}`;
  }
  if (!Array.isArray(v) || v.length < 9) return BAD_IMAGE;
  const [
    objectKind,
    id,
    type,
    objectGeneration,
    rawSource,
    state,
    queued,
    rawTimers,
    storeVersion,
    rawMembership,
    rawSessions,
    rawEvents,
    rawDurable,
  ] = v as unknown[];
  const durable = rawDurable === undefined || rawDurable === null ? null : readDurable(rawDurable);
  const events = rawEvents === undefined ? [] : readEventPlaces(rawEvents);
  const membership = rawMembership === undefined ? NO_MEMBERSHIP : readMembership(rawMembership);
  const sessions = rawSessions === undefined ? [] : readBindings(rawSessions);
  const source = readObjectFences(rawSource);
  if (
    !isObjectKind(objectKind) ||
    !isName(id) ||
    !isName(type) ||
    !isCount(objectGeneration) ||
    source === undefined ||
    (state !== null && !isBytes(state)) ||
    !Array.isArray(queued) ||
    !queued.every(isBytes) ||
    !Array.isArray(rawTimers) ||
    !isCount(storeVersion) ||
    membership === undefined ||
    sessions === undefined ||
    events === undefined ||
    durable === undefined
  )
    return BAD_IMAGE;
  const timers: TimerImage[] = [];
  for (const t of rawTimers as unknown[]) {
    const timer = readTimer(t);
    if (timer === undefined) return BAD_IMAGE;
    timers.push(timer);
  }
  return {
    objectKind,
    id,
    type,
    objectGeneration,
    source,
    state: state ?? undefined,
    queued,
    timers,
    storeVersion,
    membership,
    sessions,
    events,
    ...(durable !== null && { durable }),
  };
}

/** `[epoch, version]`; `undefined` when it is not that. */
function readDurable(v: unknown): { epoch: number; version: number } | undefined {
  if (!Array.isArray(v) || v.length !== 2) return undefined;
  const [epoch, version] = v as unknown[];
  return isCount(epoch) && epoch >= 1 && isCount(version) ? { epoch, version } : undefined;
}

/** `[[publisherGeneration, seq]...]`; `undefined` when it is not that. */
function readEventPlaces(v: unknown): [string, number][] | undefined {
  if (!Array.isArray(v)) return undefined;
  for (const e of v as unknown[]) if (!Array.isArray(e) || !isName(e[0]) || !isCount(e[1])) return undefined;
  return v as [string, number][];
}

function readBindings(v: unknown): BindingImage[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: BindingImage[] = [];
  for (const b of v as unknown[]) {
    const binding = Array.isArray(b) ? readBindingItems(b) : undefined;
    if (binding === undefined) return undefined;
    out.push(binding);
  }
  return out;
}

/** A binding's items as a move's image and a bind's payload both write them (`bindingItems`). */
export function bindingItems(b: BindingImage): unknown[] {
  return [b.ownerRid, b.ownerGeneration, b.listener, b.sessionId, b.bindingGeneration];
}

/**
 * The binding in the first items of `v` (as `bindingItems` writes them); `undefined` when they are not one.
 */
export function readBindingItems(v: readonly unknown[]): BindingImage | undefined {
  const [ownerRid, ownerGeneration, listener, sessionId, bindingGeneration] = v;
  if (
    !isName(ownerRid) ||
    !isStr(ownerGeneration) ||
    !isName(listener) ||
    !isName(sessionId) ||
    !isCount(bindingGeneration)
  )
    return undefined;
  return { ownerRid, ownerGeneration, listener, sessionId, bindingGeneration };
}

function readMembership(m: unknown): MembershipImage | undefined {
  if (!Array.isArray(m) || m.length < 2) return undefined;
  const [spot, members] = m as unknown[];
  if ((spot !== null && !isName(spot)) || !Array.isArray(members)) return undefined;
  const list: (readonly [string, number])[] = [];
  for (const item of members as unknown[]) {
    if (!Array.isArray(item) || item.length < 2 || !isName(item[0]) || !isCount(item[1])) return undefined;
    list.push([item[0], item[1]]);
  }
  return { spot: spot ?? undefined, members: list };
}

function readTimer(t: unknown): TimerImage | undefined {
  if (!Array.isArray(t) || t.length < 4) return undefined;
  const [kind, label, dueInMs, intervalMs, durable] = t as unknown[];
  if (kind !== 'timeout' && kind !== 'interval') return undefined;
  if ((label !== null && !isStr(label)) || !isCount(dueInMs)) return undefined;
  if (kind === 'interval' ? !isCount(intervalMs) : intervalMs !== null) return undefined;
  if (durable !== undefined && durable !== null && durable !== true) return undefined;
  return {
    kind,
    label: label ?? undefined,
    dueInMs,
    intervalMs: kind === 'interval' ? (intervalMs as number) : undefined,
    ...(durable === true && { durable: true as const }),
  };
}

/**
 * `image` as the chunk records that carry it, in order, none holding more than `chunkBytes` of it
 * (at least one record, even for an empty image). `chunkBytes` is a positive integer.
 */
export function encodeRelocationChunks(
  relocationId: string,
  image: Uint8Array,
  chunkBytes: number,
): Uint8Array[] {
  const checksum = crc32(image);
  const total = Math.max(1, Math.ceil(image.length / chunkBytes));
  const chunks: Uint8Array[] = [];
  for (let seq = 0; seq < total; seq++) {
    const bytes = image.subarray(seq * chunkBytes, (seq + 1) * chunkBytes);
    chunks.push(
      new Uint8Array(
        packr.pack([WIRE_VERSION, RecordKind.RelocationChunk, relocationId, seq, total, checksum, bytes]),
      ),
    );
  }
  return chunks;
}

/** Reads a chunk (the record array); the reason it is malformed otherwise. Never throws. */
export function decodeRelocationChunk(value: readonly unknown[]): RelocationChunkRecord | string {
  const [, , relocationId, seq, total, checksum, bytes] = value;
  if (
    value.length < 7 ||
    !isName(relocationId) ||
    !isCount(seq) ||
    !isCount(total) ||
    total === 0 ||
    seq >= total ||
    !isCount(checksum) ||
    checksum > 0xffffffff ||
    !isBytes(bytes)
  )
    return 'malformed relocation chunk record';
  return { kind: RecordKind.RelocationChunk, relocationId, seq, total, checksum, bytes };
}

export type AssemblyStep =
  | { readonly tag: 'more' }
  | { readonly tag: 'complete'; readonly image: Uint8Array }
  | { readonly tag: 'failed'; readonly reason: string };

/**
 * The target's side of one transfer: chunks of one relocation, in any order, each once; the image
 * once all are in and its checksum holds. A chunk that disagrees with the first (total, checksum), a
 * second copy of a chunk, or more than `maxBytes` in all fails the transfer, and so does every chunk
 * after a failure: a relocation whose image cannot be trusted is aborted, never half restored.
 */
export class ChunkAssembly {
  private readonly parts: (Uint8Array | undefined)[] = [];
  private received = 0;
  private bytes = 0;
  private header: { total: number; checksum: number } | undefined;
  private failure: string | undefined;

  constructor(
    readonly relocationId: string,
    private readonly maxBytes: number,
  ) {}

  add(chunk: RelocationChunkRecord): AssemblyStep {
    if (this.failure !== undefined) return this.fail(this.failure);
    if (chunk.relocationId !== this.relocationId) return this.fail('a chunk of another relocation');
    this.header ??= { total: chunk.total, checksum: chunk.checksum };
    if (chunk.total !== this.header.total || chunk.checksum !== this.header.checksum)
      return this.fail('chunks disagree on the image they carry');
    if (this.parts[chunk.seq] !== undefined) return this.fail(`chunk ${chunk.seq} arrived twice`);
    this.bytes += chunk.bytes.length;
    if (this.bytes > this.maxBytes) return this.fail(`the image is larger than ${this.maxBytes} bytes`);
    this.parts[chunk.seq] = chunk.bytes;
    if (++this.received < this.header.total) return { tag: 'more' };
    const image = Buffer.concat(this.parts as Uint8Array[], this.bytes);
    if (crc32(image) !== this.header.checksum) return this.fail('the image does not match its checksum');
    return { tag: 'complete', image: new Uint8Array(image.buffer, image.byteOffset, image.length) };
  }

  private fail(reason: string): AssemblyStep {
    this.failure = reason;
    return { tag: 'failed', reason };
  }
}
