/**
 * Hostile inputs for the frame fuzz (frames.spec.ts): a seeded generator of zeromq messages for a
 * ClientServer listener, a ClientServer client and a RouteMesh MeshNode. Valid records are built
 * with the real encoders of lib/core, then broken: wrong frame counts, truncation, flipped bytes,
 * wrong versions, unknown kinds, oversized / non-UTF-8 / NUL metadata, undecodable payloads, forged
 * and out-of-range correlation ids, handshakes for other channels, meshes and generations, batches
 * that mix good and bad records, and frames built to make the decoder allocate without bound.
 *
 * Every input says how many events the target must at least count for it (`expect`), worked out
 * from what the real decoder reads in it and from the target's documented rules (docs/operations.md,
 * "Observability events"). `expect` 0 marks input the target may take without an event by design: a
 * hello for the right channel, a ping, a welcome or state of the right channel or mesh (a new
 * generation is a restart, a stale revision is ignored, docs/protocol.md#weights-and-drain-state, docs/protocol.md#lifecycle-generations), and the few well-formed calls
 * mixed in as controls.
 */
import {
  type WireRecord,
  RecordKind,
  decodeFrame,
  decodeMetadata,
  decodePayload,
} from '../../lib/core/index.js';
import {
  encodeErrorReply,
  encodeHello,
  encodePayload,
  encodePing,
  encodeReply,
  encodeRequest,
  encodeSend,
  encodeServerState,
} from '../../lib/core/wire/wire.js';
import {
  encodeMeshPing,
  encodeMeshRequest,
  encodeMeshSend,
  encodeMeshState,
} from '../../lib/core/wire/mesh-records.js';
import { encodeFanoutBeacon, encodeFanoutEvent } from '../../lib/core/wire/fanout-records.js';
import { encodeMetadata } from '../../lib/core/wire/metadata.js';
import { packr } from '../../lib/core/wire/codec.js';

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export class Rng {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0;
  }

  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** 0 ≤ n < max. */
  int(max: number): number {
    return max <= 1 ? 0 : Math.floor((this.next() / 0x100000000) * max);
  }

  chance(p: number): boolean {
    return this.next() / 0x100000000 < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = this.next() & 0xff;
    return out;
  }
}

/** The seed of this run: `ZLINK_FUZZ_SEED`, or a fresh one (printed by the spec, so a failure can be replayed). */
/** The seed `npm test` uses: CI replays the same inputs every run, so a red run is a bug, never luck. */
export const CI_FUZZ_SEED = 454003705;

/** `ZLINK_FUZZ_SEED`: a number replays that run; `random` draws a fresh one (`npm run fuzz`); unset: `CI_FUZZ_SEED`. */
export function fuzzSeed(): number {
  const raw = process.env.ZLINK_FUZZ_SEED;
  if (raw === 'random') return (Date.now() ^ (process.pid << 16)) >>> 0;
  if (raw !== undefined && raw !== '') return Number(raw) >>> 0;
  return CI_FUZZ_SEED;
}

/** One zeromq message toward a target (the target's routing frame is added by the socket) and its minimum event count. */
export interface FuzzInput {
  readonly frames: Buffer[];
  readonly expect: number;
  readonly label: string;
}

export const CS_CHANNEL = 'fuzz';
export const MESH = 'fuzzmesh';
export const MESH_CHANNEL = 'fz';
export const FAKE_PEER_RID = 'fake-peer';
/** The packets the fuzzed runtimes answer: `echo` (channel request), `status` (Node direct request). */
export const ECHO = 'echo';
export const STATUS = 'status';

/** Frames at least this large are sent only a few times per run (they cost a copy each way). */
const AMPLIFY_BYTES = 2 * 1024 * 1024;

// --- values -------------------------------------------------------------------------------------

const CORRELATIONS: readonly unknown[] = [
  1,
  2,
  7,
  127,
  128,
  255,
  256,
  65535,
  65536,
  0x7fffffff,
  0xffffffff,
  0x100000000,
  0x100000001,
  Number.MAX_SAFE_INTEGER,
  2 ** 53,
  2 ** 64,
  0,
  -1,
  -(2 ** 40),
  1.5,
  NaN,
  Infinity,
  'c',
  null,
  true,
];

function correlation(rng: Rng): unknown {
  return rng.chance(0.5) ? 1 + rng.int(0x7fffffff) : rng.pick(CORRELATIONS);
}

/** A correlation the hand-written encoders can write (a positive safe integer). */
function goodCorrelation(rng: Rng): number {
  return rng.chance(0.2) ? 0x100000000 + rng.int(1 << 30) : 1 + rng.int(0xffffffff);
}

function text(rng: Rng): string {
  switch (rng.int(8)) {
    case 0:
      return '';
    case 1:
      return 'x'.repeat(32 + rng.int(300)); // past fixstr: the slow decode path
    case 2:
      return 'ünï\u{1F600}còdé';
    case 3:
      return 'a\u0000b';
    case 4:
      return '\uD800'; // a lone surrogate: msgpackr writes replacement bytes
    default:
      return rng.bytes(1 + rng.int(12)).toString('base64');
  }
}

function packet(rng: Rng, known: readonly string[]): string {
  return rng.chance(0.4) ? rng.pick(known) : text(rng);
}

function scalar(rng: Rng): unknown {
  return rng.pick<() => unknown>([
    () => null,
    () => rng.int(1000),
    () => -rng.int(1 << 30),
    () => rng.next() / 7,
    () => text(rng),
    () => rng.bytes(rng.int(16)),
    () => rng.chance(0.5),
    () => [1, 2, 3],
    () => ({ a: 1, b: [text(rng)] }),
  ])();
}

function payloadValue(rng: Rng): unknown {
  return rng.chance(0.7) ? { n: rng.int(1e6), s: text(rng) } : scalar(rng);
}

function uvarint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

function rawMetadata(entries: readonly (readonly [Buffer, Buffer])[]): Buffer {
  return Buffer.concat(entries.flatMap(([k, v]) => [uvarint(k.length), k, uvarint(v.length), v]));
}

/** Metadata bytes: good ones, or each way the receiver must refuse them (docs/protocol.md#metadata). */
function metadata(rng: Rng): Buffer | undefined {
  switch (rng.int(10)) {
    case 0:
    case 1:
      return undefined;
    case 2:
      return Buffer.from(encodeMetadata(new Map([['tenant-id', text(rng).replace(/\0|\uD800/g, '')]])));
    case 3: // oversized: valid entries, more than 1024 bytes in all
      return rawMetadata([[Buffer.from('k'), Buffer.alloc(1025 + rng.int(4000), 0x61)]]);
    case 4: // not UTF-8
      return rawMetadata([[Buffer.from([0xff, 0xfe, 0x80]), Buffer.from('v')]]);
    case 5: // NUL in a key or a value
      return rng.chance(0.5)
        ? rawMetadata([[Buffer.from('k\0'), Buffer.from('v')]])
        : rawMetadata([[Buffer.from('k'), Buffer.from('v\0')]]);
    case 6: // a length past the end
      return Buffer.concat([uvarint(200), Buffer.from('short')]);
    case 7: // an endless varint
      return Buffer.alloc(1 + rng.int(12), 0x80);
    case 8:
      return Buffer.alloc(0);
    default:
      return rng.bytes(1 + rng.int(64));
  }
}

/** Payload bytes: encoded values, or bytes msgpack cannot read. */
function payload(rng: Rng): Buffer {
  switch (rng.int(6)) {
    case 0:
      return Buffer.alloc(0);
    case 1:
      return Buffer.from([0x92, 0x01]); // truncated
    case 2:
      return Buffer.from([0xd4, 0x07, 0x00]); // unknown extension
    case 3:
      return rng.bytes(1 + rng.int(32));
    default:
      return Buffer.from(encodePayload(payloadValue(rng)));
  }
}

/** The framework field: absent, good, or malformed. */
function fields(rng: Rng): Buffer | undefined {
  switch (rng.int(8)) {
    case 0:
      return Buffer.from(packr.pack({ tp: '00-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-01' }));
    case 1:
      return Buffer.from(packr.pack({ tp: 5 }));
    case 2:
      return Buffer.from(packr.pack({ tp: 'x'.repeat(300) }));
    case 3:
      return Buffer.from(packr.pack([1, 2]));
    default:
      return undefined;
  }
}

// --- records ------------------------------------------------------------------------------------

function request(rng: Rng, known: readonly string[]): Buffer {
  if (rng.chance(0.25)) {
    // Any value as the correlation, any field count: written by msgpackr.
    const items = [correlation(rng), packet(rng, known), metadata(rng) ?? null, payload(rng)];
    if (rng.chance(0.3)) items.push(scalar(rng));
    return Buffer.from(packr.pack([1, RecordKind.Request, ...items.slice(0, 1 + rng.int(items.length))]));
  }
  return Buffer.from(
    encodeRequest(goodCorrelation(rng), packet(rng, known), metadata(rng), payload(rng), fields(rng)),
  );
}

function send(rng: Rng, known: readonly string[]): Buffer {
  return Buffer.from(encodeSend(packet(rng, known), metadata(rng), payload(rng), fields(rng)));
}

function reply(rng: Rng): Buffer {
  if (rng.chance(0.3)) return Buffer.from(packr.pack([1, RecordKind.Reply, correlation(rng), payload(rng)]));
  if (rng.chance(0.5)) return Buffer.from(encodeReply(goodCorrelation(rng), payload(rng)));
  const details = rng.chance(0.5) ? undefined : scalar(rng);
  const error = { code: rng.pick(['NoHandler', 'HandlerError', text(rng)]), message: text(rng), details };
  return Buffer.from(encodeErrorReply(goodCorrelation(rng), error));
}

function weight(rng: Rng): unknown {
  return rng.chance(0.8) ? rng.int(10001) : rng.pick([-1, 10001, 1.5, 'w', null]);
}

function serverState(rng: Rng, channel: string): Buffer {
  const kind = rng.chance(0.6) ? RecordKind.Welcome : RecordKind.State;
  if (rng.chance(0.2)) {
    // Fields of the wrong type or count.
    const items = [channel, text(rng), text(rng), weight(rng), rng.chance(0.5), rng.int(100)];
    return Buffer.from(packr.pack([1, kind, ...items.slice(0, rng.int(items.length + 1))]));
  }
  const state = {
    channel: rng.chance(0.6) ? channel : text(rng),
    serverRid: rng.chance(0.7) ? 'fuzz-server' : text(rng),
    generation: rng.pick(['gen-a', 'gen-b', text(rng)]),
    weight: rng.int(10001),
    draining: rng.chance(0.2),
    revision: rng.pick([0, 1, 2, rng.int(1 << 30), -5]),
  };
  return Buffer.from(encodeServerState(kind, state));
}

function hello(rng: Rng, channel: string): Buffer {
  if (rng.chance(0.2))
    return Buffer.from(packr.pack([1, RecordKind.Hello, ...[channel, 'id', 3].slice(0, rng.int(4))]));
  return Buffer.from(encodeHello(rng.chance(0.5) ? channel : text(rng), text(rng)));
}

function meshState(rng: Rng): Buffer {
  const kind = rng.pick([
    RecordKind.MeshHello,
    RecordKind.MeshHello,
    RecordKind.MeshWelcome,
    RecordKind.MeshState,
  ]);
  const memberships = Array.from({ length: rng.int(4) }, () => ({
    channel: rng.chance(0.5) ? MESH_CHANNEL : text(rng),
    weight: rng.int(10001),
    draining: rng.chance(0.2),
  }));
  if (rng.chance(0.2)) {
    const bad = [
      MESH,
      FAKE_PEER_RID,
      'g',
      rng.pick(['none', 'client', 'server', 'boss']),
      [[1, 2]],
      rng.int(9),
    ];
    return Buffer.from(packr.pack([1, kind, ...bad.slice(0, rng.int(bad.length + 1))]));
  }
  return Buffer.from(
    encodeMeshState(kind, {
      mesh: rng.chance(0.7) ? MESH : text(rng),
      rid: rng.chance(0.7) ? FAKE_PEER_RID : rng.pick(['someone-else', 'x'.repeat(40), text(rng)]),
      generation: rng.pick(['fake-gen-0', 'fake-gen-1', 'fake-gen-2', text(rng)]),
      objectRole: rng.pick(['none', 'client', 'server'] as const),
      memberships,
      revision: rng.pick([0, 1, 2, 3, rng.int(1 << 30)]),
    }),
  );
}

function meshCall(rng: Rng): Buffer {
  const channel = rng.pick([undefined, MESH_CHANNEL, MESH_CHANNEL, 'unknown-channel', text(rng)]);
  const name = packet(rng, [ECHO, STATUS]);
  if (rng.chance(0.5))
    return Buffer.from(encodeMeshSend(channel, name, metadata(rng), payload(rng), fields(rng)));
  if (rng.chance(0.2)) {
    const items = [correlation(rng), channel ?? null, name, metadata(rng) ?? null, payload(rng)];
    return Buffer.from(packr.pack([1, RecordKind.MeshRequest, ...items.slice(0, 1 + rng.int(items.length))]));
  }
  return Buffer.from(
    encodeMeshRequest(goodCorrelation(rng), channel, name, metadata(rng), payload(rng), fields(rng)),
  );
}

/** A kind no target knows, a version no target speaks, or a value that is not a record. */
function alien(rng: Rng): Buffer {
  switch (rng.int(7)) {
    case 0:
      return Buffer.from(
        packr.pack([1, rng.pick([0, 5, 9, 14, 19, 26, 29, 32, 99, 255, 70000, -3, 1.5, 'kind', null])]),
      );
    case 1:
      return Buffer.from(
        packr.pack([rng.pick([0, 2, 255, -1, '1', null]), RecordKind.Request, 1, 'p', null, Buffer.alloc(1)]),
      );
    case 2:
      return Buffer.from(encodeFanoutEvent(rng.int(100), 'evt', Buffer.from(encodePayload(1))));
    case 3:
      return Buffer.from(encodeFanoutBeacon(CS_CHANNEL, 'pub', 'g'));
    case 4:
      return Buffer.from(packr.pack(scalar(rng)));
    case 5:
      return Buffer.from(encodeMeshPing()); // a MeshNode takes it; ClientServer sockets never do
    default:
      return Buffer.from(packr.pack([1]));
  }
}

// --- breaking records ---------------------------------------------------------------------------

function truncate(rng: Rng, record: Buffer): Buffer {
  return record.subarray(0, rng.int(record.length));
}

function flip(rng: Rng, record: Buffer): Buffer {
  const out = Buffer.from(record);
  for (let i = 1 + rng.int(3); i > 0 && out.length > 0; i--) out[rng.int(out.length)] = rng.next() & 0xff;
  return out;
}

/** Version (byte 1) or kind (byte 2) of a fixarray record replaced. */
function reheader(rng: Rng, record: Buffer): Buffer {
  const out = Buffer.from(record);
  if (out.length > 2) out[1 + rng.int(2)] = rng.pick([0x00, 0x02, 0x7f, 0xc0, 0xff, rng.next() & 0xff]);
  return out;
}

function randomFrame(rng: Rng): Buffer {
  return rng.bytes(rng.chance(0.95) ? 1 + rng.int(64) : 1 + rng.int(8192));
}

/** Frames that make a decoder without a bound allocate one value per byte (top level, or nested in one record). */
function amplifier(rng: Rng): Buffer {
  const frame = Buffer.alloc(AMPLIFY_BYTES, rng.pick([0x90, 0x80, 0xc0]));
  if (rng.chance(0.5)) {
    frame[0] = 0xdd; // one array holding everything after it
    frame.writeUInt32BE(AMPLIFY_BYTES - 5, 1);
  }
  return frame;
}

/** How the target counts one readable record: the minimum number of events it must emit. */
export type RecordRule = (record: WireRecord) => number;

/** A target: its own record kinds, which records it counts, and how many frames it expects. */
interface TargetShape {
  readonly records: readonly ((rng: Rng) => Buffer)[];
  readonly rule: RecordRule;
}

function hostileFrame(rng: Rng, shape: TargetShape): { frame: Buffer; label: string } {
  const record = () => rng.pick(shape.records)(rng);
  switch (rng.int(12)) {
    case 0:
      return { frame: randomFrame(rng), label: 'random' };
    case 1:
      return { frame: truncate(rng, record()), label: 'truncated' };
    case 2:
      return { frame: flip(rng, record()), label: 'flipped' };
    case 3:
      return { frame: reheader(rng, record()), label: 'header' };
    case 4:
      return { frame: alien(rng), label: 'alien' };
    case 5: {
      const parts = Array.from({ length: 2 + rng.int(7) }, () =>
        rng.chance(0.3) ? flip(rng, record()) : record(),
      );
      return { frame: Buffer.concat(parts), label: 'batch' };
    }
    case 6:
      return { frame: Buffer.concat([record(), rng.bytes(1 + rng.int(8))]), label: 'trailing' };
    case 7:
      return { frame: Buffer.alloc(0), label: 'empty' };
    default:
      return { frame: record(), label: 'record' };
  }
}

/** Events the target must count for one single-frame message: one per unreadable record, plus the rule per record. */
function expected(frame: Buffer, rule: RecordRule): number {
  const decoded = decodeFrame(frame);
  let n = decoded.malformed.length;
  for (const record of decoded.records) n += rule(record);
  return n;
}

/**
 * `count` inputs for one target, lazily (no million-element array sits in the heap being measured).
 * Two of them are amplifier frames; the rest mix wrong frame counts with hostile single frames.
 */
export function* inputs(rng: Rng, count: number, shape: TargetShape): Generator<FuzzInput> {
  const amplifyAt = new Set([Math.floor(count / 3), Math.floor((2 * count) / 3)]);
  for (let i = 0; i < count; i++) {
    if (amplifyAt.has(i)) {
      const frame = amplifier(rng);
      yield { frames: [frame], expect: expected(frame, shape.rule), label: 'amplifier' };
    } else if (rng.chance(0.06)) {
      const frames = Array.from({ length: rng.pick([0, 2, 2, 3, 5]) }, () =>
        rng.chance(0.5) ? hostileFrame(rng, shape).frame : rng.pick(shape.records)(rng),
      );
      // A message needs at least one frame: for 'none', two empty ones (one too many).
      yield {
        frames: frames.length === 0 ? [Buffer.alloc(0), Buffer.alloc(0)] : frames,
        expect: 1,
        label: 'frame-count',
      };
    } else {
      const { frame, label } = hostileFrame(rng, shape);
      yield { frames: [frame], expect: expected(frame, shape.rule), label };
    }
  }
}

// --- the three targets --------------------------------------------------------------------------

/** Whether a call record would reach a registered handler and succeed (then it is counted in metrics, not events). */
function handled(
  metadataBytes: Uint8Array | undefined,
  payloadBytes: Uint8Array,
  registered: boolean,
): boolean {
  return registered && decodeMetadata(metadataBytes).ok && decodePayload(payloadBytes).ok;
}

/** A ClientServer Server listener of `CS_CHANNEL` with a request handler `echo`. */
export const serverTarget: TargetShape = {
  records: [
    (rng) => request(rng, [ECHO]),
    (rng) => request(rng, [ECHO]),
    (rng) => send(rng, [ECHO]),
    (rng) => hello(rng, CS_CHANNEL),
    (rng) => serverState(rng, CS_CHANNEL),
    () => Buffer.from(encodePing()),
    reply,
    meshState,
    meshCall,
    alien,
  ],
  rule: (r) => {
    switch (r.kind) {
      case RecordKind.Hello:
        return r.channel === CS_CHANNEL ? 0 : 1;
      case RecordKind.Request:
        return handled(r.metadata, r.payload, r.packet === ECHO) ? 0 : 1;
      case RecordKind.Send:
        return 1; // no send handler here: no_handler (or protocol_error for its metadata)
      case RecordKind.Ping:
        return 0; // a client's liveness: noted for a known client, ignored otherwise
      default:
        return 1; // a server takes no other kind
    }
  },
};

/** A ClientServer Client of `CS_CHANNEL` with no request pending while the fuzz runs. */
export const clientTarget: TargetShape = {
  records: [
    reply,
    reply,
    (rng) => serverState(rng, CS_CHANNEL),
    (rng) => request(rng, [ECHO]),
    (rng) => hello(rng, CS_CHANNEL),
    () => Buffer.from(encodePing()),
    meshState,
    meshCall,
    alien,
  ],
  rule: (r) => {
    switch (r.kind) {
      case RecordKind.Reply:
      case RecordKind.ErrorReply:
        return 1; // no request waits: a drop
      case RecordKind.Welcome:
        return r.channel === CS_CHANNEL ? 0 : 1;
      case RecordKind.State:
        return 0; // applied with a larger revision of the same generation, else ignored (docs/protocol.md#weights-and-drain-state)
      case RecordKind.Ping:
        return 0; // the server's liveness
      default:
        return 1;
    }
  },
};

/**
 * A MeshNode of `MESH` with a Server membership for `MESH_CHANNEL` (request handler `echo`) and a
 * Node direct request handler `status`; the inputs come from a fake peer named `FAKE_PEER_RID`
 * that completed its handshake first.
 */
export const meshTarget: TargetShape = {
  records: [
    meshState,
    meshState,
    meshCall,
    meshCall,
    meshCall,
    reply,
    (rng) => request(rng, [ECHO]),
    (rng) => hello(rng, CS_CHANNEL),
    alien,
  ],
  rule: (r) => {
    switch (r.kind) {
      case RecordKind.MeshHello:
        // Another NodeRid than the pipe's run, or another mesh: refused (another generation of it is
        // refused too, counted beyond this rule). The right ones (re)admit the peer.
        return r.rid !== FAKE_PEER_RID || r.mesh !== MESH ? 1 : 0;
      case RecordKind.MeshWelcome:
        return 1; // the fake peer's pipe is not one of the node's links
      case RecordKind.MeshState:
        return r.rid !== FAKE_PEER_RID ? 1 : 0;
      case RecordKind.MeshPing:
        return 0;
      case RecordKind.MeshSend:
        return 1; // no send handlers on the node
      case RecordKind.MeshRequest: {
        const registered =
          (r.channel === undefined && r.packet === STATUS) ||
          (r.channel === MESH_CHANNEL && r.packet === ECHO);
        return handled(r.metadata, r.payload, registered) ? 0 : 1;
      }
      default:
        return 1; // replies for nothing pending (drop), ClientServer and unknown kinds
    }
  },
};
