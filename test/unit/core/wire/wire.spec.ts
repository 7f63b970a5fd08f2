import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  type DecodedFrame,
  RecordKind,
  type ServerState,
  WIRE_VERSION,
  type WireRecord,
  decodeFrame,
  decodePayload,
  decodeRecords,
  encodeErrorReply,
  encodeHello,
  encodePayload,
  encodePing,
  encodeReply,
  encodeMeshRequest,
  encodeMeshSend,
  encodeRequest,
  encodeSend,
  encodeServerState,
  joinRecords,
  metadataFromRecord,
} from '../../../../lib/core/index.js';

/** Wire records: one msgpack array per record, several per frame (docs/architecture.md#performance-shape); the decoder never throws. */

const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);
/** Decoded `bin` fields come back as Buffers; compare records with plain byte arrays. */
function plain(record: WireRecord): unknown {
  return Object.fromEntries(
    Object.entries(record).map(([k, v]) => [k, v instanceof Uint8Array ? [...v] : v]),
  );
}

function single(frame: Uint8Array): WireRecord {
  const decoded = decodeFrame(frame);
  expect(decoded.malformed).toEqual([]);
  expect(decoded.records).toHaveLength(1);
  return decoded.records[0] as WireRecord;
}

const state: ServerState = {
  channel: 'billing',
  serverRid: 'srv-1',
  generation: 'g-7f3a',
  weight: 300,
  draining: true,
  revision: 12,
};
const md = metadataFromRecord({ 'tenant-id': 't-42', locale: 'ko-KR' }) as Uint8Array;
const payload = encodePayload({ orderId: 17, items: ['a', 'b'] });

/** One encoded frame per record kind, with the record the decoder must give back. */
const SAMPLES: [string, Uint8Array, WireRecord][] = [
  [
    'Hello',
    encodeHello('billing', 'client-1'),
    { kind: RecordKind.Hello, channel: 'billing', clientId: 'client-1' },
  ],
  ['Welcome', encodeServerState(RecordKind.Welcome, state), { kind: RecordKind.Welcome, ...state }],
  [
    'State',
    encodeServerState(RecordKind.State, { ...state, draining: false, weight: 0 }),
    { kind: RecordKind.State, ...state, draining: false, weight: 0 },
  ],
  [
    'Send with metadata',
    encodeSend('billing.note', md, payload),
    { kind: RecordKind.Send, packet: 'billing.note', metadata: md, payload },
  ],
  [
    'Send without metadata',
    encodeSend('billing.note', undefined, payload),
    { kind: RecordKind.Send, packet: 'billing.note', metadata: undefined, payload },
  ],
  [
    'Request with metadata',
    encodeRequest(41, 'billing.charge', md, payload),
    { kind: RecordKind.Request, correlation: 41, packet: 'billing.charge', metadata: md, payload },
  ],
  [
    'Request without metadata, correlation past 2^32',
    encodeRequest(2 ** 40 + 3, 'billing.charge', undefined, payload),
    {
      kind: RecordKind.Request,
      correlation: 2 ** 40 + 3,
      packet: 'billing.charge',
      metadata: undefined,
      payload,
    },
  ],
  ['Reply', encodeReply(41, payload), { kind: RecordKind.Reply, correlation: 41, payload }],
  [
    'Reply with empty payload bytes',
    encodeReply(1, new Uint8Array(0)),
    { kind: RecordKind.Reply, correlation: 1, payload: new Uint8Array(0) },
  ],
  [
    'ErrorReply without details',
    encodeErrorReply(41, { code: 'NoHandler', message: 'no handler for billing.x' }),
    {
      kind: RecordKind.ErrorReply,
      correlation: 41,
      error: { code: 'NoHandler', message: 'no handler for billing.x' },
    },
  ],
  [
    'ErrorReply with details',
    encodeErrorReply(42, {
      code: 'HandlerError',
      message: 'bad',
      details: { status: 400, fields: ['amount'] },
    }),
    {
      kind: RecordKind.ErrorReply,
      correlation: 42,
      error: { code: 'HandlerError', message: 'bad', details: { status: 400, fields: ['amount'] } },
    },
  ],
];

describe('wire records round-trip', () => {
  it.each(SAMPLES)('%s round-trips through encode/decodeFrame', (_name, frame, expected) => {
    expect(plain(single(frame))).toEqual(plain(expected));
  });

  it('several records concatenated in one frame decode in order (batch)', () => {
    const frame = joinRecords(SAMPLES.map(([, f]) => f));
    const decoded = decodeFrame(frame);
    expect(decoded.malformed).toEqual([]);
    expect(decoded.records.map(plain)).toEqual(SAMPLES.map(([, , r]) => plain(r)));
  });

  it('a batch of one is the record itself (no copy)', () => {
    const f = encodeReply(3, payload);
    expect(joinRecords([f])).toBe(f);
  });

  it('payloads decode back to their values', () => {
    for (const value of [null, 0, -1.5, 'text', '한글', [1, [2]], { a: { b: true } }, 2 ** 53 - 1]) {
      expect(decodePayload(encodePayload(value))).toEqual({ ok: true, value });
    }
    const r = decodePayload(encodePayload(Buffer.from([1, 2, 3])));
    expect(r.ok && [...(r.value as Uint8Array)]).toEqual([1, 2, 3]);
  });

  it('round-trips arbitrary requests and sends (property)', () => {
    const bin = fc.uint8Array({ maxLength: 64 });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.string({ maxLength: 40 }),
        fc.option(bin, { nil: undefined }),
        bin,
        (correlation, packet, metadata, body) => {
          const frame = joinRecords([
            encodeRequest(correlation, packet, metadata, body),
            encodeSend(packet, metadata, body),
          ]);
          const { records, malformed } = decodeFrame(frame);
          expect(malformed).toEqual([]);
          expect(records.map(plain)).toEqual([
            plain({ kind: RecordKind.Request, correlation, packet, metadata, payload: body }),
            plain({ kind: RecordKind.Send, packet, metadata, payload: body }),
          ]);
        },
      ),
      { numRuns: 500 },
    );
  });
});

/** Packs an arbitrary value the way the wire does (a test-built "record"). */
const pack = (value: unknown): Uint8Array => encodePayload(value);

// Around every msgpack size boundary: fixint/uint 8/16/32/float64, fixstr/str 8/16, bin 8/16/32.
const edges = (...points: number[]): number[] => points.flatMap((p) => [p - 1, p, p + 1]);
const correlationArb = () =>
  fc.oneof(
    fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    fc.constantFrom(...edges(0x80, 0x100, 0x10000, 2 ** 32)),
  );
const binArb = () =>
  fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc.constantFrom(...edges(0x100, 0x10000).map((n) => new Uint8Array(n).fill(7))),
  );

describe('records that carry a payload are written by hand', () => {
  const correlation = correlationArb();
  const packet = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 120 }),
    fc.constantFrom(...edges(32, 256, 65536).map((n) => 'p'.repeat(n)), 'é'.repeat(16), '한'.repeat(90)),
  );
  const bin = binArb();

  it('byte for byte what msgpackr writes for the same record array (property)', () => {
    // Hex: jest compares large byte arrays element by element, far too slowly for 64 KiB ones.
    const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
    fc.assert(
      fc.property(
        correlation,
        packet,
        fc.option(bin, { nil: undefined }),
        bin,
        (id, name, metadata, body) => {
          const meta = metadata ?? null;
          expect(hex(encodeRequest(id, name, metadata, body))).toBe(
            hex(pack([WIRE_VERSION, RecordKind.Request, id, name, meta, body])),
          );
          expect(hex(encodeSend(name, metadata, body))).toBe(
            hex(pack([WIRE_VERSION, RecordKind.Send, name, meta, body])),
          );
          expect(hex(encodeReply(id, body))).toBe(hex(pack([WIRE_VERSION, RecordKind.Reply, id, body])));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('a frame of calls and replies is read without msgpackr', () => {
  // Bytes as hex: jest compares large byte arrays element by element, far too slowly.
  const hexed = (record: WireRecord): unknown =>
    Object.entries(record).map(([k, v]) => [k, v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v]);
  const decodedAlike = (frame: Uint8Array): void => {
    const fast = decodeFrame(frame);
    const general = decodeRecords(frame);
    expect(fast.records.map(hexed)).toEqual(general.records.map(hexed));
    expect(fast.malformed).toEqual(general.malformed);
  };
  const lone = fc.oneof(
    fc
      .tuple(
        correlationArb(),
        fc.string({ maxLength: 40 }),
        fc.option(binArb(), { nil: undefined }),
        binArb(),
      )
      .map(([id, name, metadata, body]) => encodeRequest(id, name, metadata, body)),
    fc.tuple(correlationArb(), binArb()).map(([id, body]) => encodeReply(id, body)),
    fc
      .tuple(
        correlationArb(),
        fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
        fc.string({ maxLength: 40 }),
        fc.option(binArb(), { nil: undefined }),
        binArb(),
      )
      .map(([id, channel, name, metadata, body]) => encodeMeshRequest(id, channel, name, metadata, body)),
    fc
      .tuple(fc.string({ maxLength: 40 }), fc.option(binArb(), { nil: undefined }), binArb())
      .map(([name, metadata, body]) => encodeSend(name, metadata, body)),
    fc
      .tuple(
        fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
        fc.string({ maxLength: 40 }),
        fc.option(binArb(), { nil: undefined }),
        binArb(),
      )
      .map(([channel, name, metadata, body]) => encodeMeshSend(channel, name, metadata, body)),
  );
  /** A batch as a sender writes it: records back to back, now and then one the fast path does not read. */
  const batch = fc
    .array(fc.oneof({ weight: 9, arbitrary: lone }, { weight: 1, arbitrary: fc.constant(encodePing()) }), {
      minLength: 1,
      maxLength: 6,
    })
    .map(joinRecords);

  it('to the same record as the general decoder (property)', () => {
    fc.assert(fc.property(lone, decodedAlike), { numRuns: 1000 });
  });

  it('a batch to the same records, in order, as the general decoder (property)', () => {
    fc.assert(fc.property(batch, decodedAlike), { numRuns: 500 });
  });

  it('repeated names come back as the same strings, and 513 records go to the general decoder', () => {
    const body = new Uint8Array(3);
    const frame = joinRecords([
      encodeMeshRequest(1, 'chan', 'echo', undefined, body),
      encodeMeshSend('chan', 'echo', undefined, body),
      encodeMeshRequest(2, undefined, 'echo', undefined, body),
    ]);
    expect(decodeFrame(frame).records).toEqual([
      {
        kind: RecordKind.MeshRequest,
        correlation: 1,
        channel: 'chan',
        packet: 'echo',
        metadata: undefined,
        payload: body,
        trace: undefined,
      },
      {
        kind: RecordKind.MeshSend,
        channel: 'chan',
        packet: 'echo',
        metadata: undefined,
        payload: body,
        trace: undefined,
      },
      {
        kind: RecordKind.MeshRequest,
        correlation: 2,
        channel: undefined,
        packet: 'echo',
        metadata: undefined,
        payload: body,
        trace: undefined,
      },
    ]);
    decodedAlike(
      joinRecords(Array.from({ length: 513 }, (_, i) => encodeRequest(i + 1, 'p', undefined, body))),
    );
  });

  it('and damaged ones to the same outcome: cut short, a byte changed, bytes appended (property)', () => {
    const damaged = fc.tuple(
      fc.oneof(lone, batch),
      fc.nat(),
      fc.integer({ min: 0, max: 255 }),
      fc.uint8Array({ maxLength: 3 }),
    );
    fc.assert(
      fc.property(damaged, ([frame, n, byte, extra]) => {
        decodedAlike(frame.subarray(0, n % (frame.length + 1)));
        const changed = Uint8Array.from(frame);
        changed[n % frame.length] = byte;
        decodedAlike(changed);
        decodedAlike(Buffer.concat([frame, extra]));
      }),
      { numRuns: 500 },
    );
  });

  it('zero correlations, str 8 and non-ASCII packets, and wrong field types decode as before', () => {
    decodedAlike(pack([WIRE_VERSION, RecordKind.Reply, 0, new Uint8Array(2)]));
    decodedAlike(pack([WIRE_VERSION, RecordKind.Request, 0, 'p', null, new Uint8Array(2)]));
    decodedAlike(encodeRequest(5, 'p'.repeat(40), undefined, new Uint8Array(2)));
    decodedAlike(encodeRequest(5, 'é', undefined, new Uint8Array(2)));
    decodedAlike(pack([WIRE_VERSION, RecordKind.Request, 5, 'p', 'not bytes', new Uint8Array(2)]));
    decodedAlike(pack([WIRE_VERSION, RecordKind.MeshRequest, 5, 7, 'p', null, new Uint8Array(2)]));
    decodedAlike(encodeMeshRequest(5, 'é', 'p', undefined, new Uint8Array(2)));
  });
});

function expectNoRecords(decoded: DecodedFrame, reasonPart?: RegExp): void {
  expect(decoded.records).toEqual([]);
  expect(decoded.malformed.length).toBeGreaterThanOrEqual(1);
  if (reasonPart) expect(decoded.malformed[0]?.reason).toMatch(reasonPart);
}

describe('the decoder never throws', () => {
  it('on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), (frame) => {
        const d = decodeFrame(frame);
        expect(Array.isArray(d.records) && Array.isArray(d.malformed)).toBe(true);
        const p = decodePayload(frame);
        expect(typeof p.ok).toBe('boolean');
      }),
      { numRuns: 4000 },
    );
  });

  it('on random msgpack values, including record-shaped arrays with random fields', () => {
    const kinds = [...Object.values(RecordKind), 0, 4, 99, -1];
    const recordish = fc
      .tuple(
        fc.constantFrom<unknown>(WIRE_VERSION, 0, 2, '1', null),
        fc.constantFrom<unknown>(...kinds),
        fc.array(fc.oneof(fc.anything(), fc.uint8Array({ maxLength: 8 }), fc.nat(), fc.string()), {
          maxLength: 8,
        }),
      )
      .map(([v, k, rest]) => [v, k, ...rest]);
    fc.assert(
      fc.property(fc.array(fc.oneof(recordish, fc.anything()), { minLength: 1, maxLength: 4 }), (values) => {
        const d = decodeFrame(joinRecords(values.map(pack)));
        expect(d.records.length + d.malformed.length).toBe(values.length);
      }),
      { numRuns: 500 },
    );
  });

  it.each(SAMPLES)('on every truncation of a %s frame', (_name, frame) => {
    for (let len = 0; len < frame.length; len++) expectNoRecords(decodeFrame(frame.subarray(0, len)));
  });

  it('on a batch whose last record is truncated', () => {
    const good = encodeReply(5, payload);
    const frame = joinRecords([good, encodeReply(6, payload).subarray(0, 4)]);
    const d = decodeFrame(frame);
    expect(d.malformed.length).toBeGreaterThanOrEqual(1);
    // The good record before the damage is kept: it may be a reply somebody waits for.
    expect(d.records).toHaveLength(1);
    expect(d.records[0]).toMatchObject({ kind: RecordKind.Reply, correlation: 5 });
  });

  it('on a wrong version', () => {
    expectNoRecords(decodeFrame(pack([2, RecordKind.Reply, 1, new Uint8Array(1)])), /version/);
    expectNoRecords(decodeFrame(pack([0, RecordKind.Hello, 'c', 'id'])), /version/);
    expectNoRecords(decodeFrame(pack(['1', RecordKind.Hello, 'c', 'id'])), /version/);
  });

  it('on an unknown kind', () => {
    expectNoRecords(decodeFrame(pack([WIRE_VERSION, 99, 1, 2])), /kind/);
    expectNoRecords(decodeFrame(pack([WIRE_VERSION, 'Reply', 1, new Uint8Array(1)])), /kind/);
  });

  it.each([
    ['not an array', 17],
    ['a one-element array', [WIRE_VERSION]],
    ['a map', { kind: RecordKind.Reply }],
    ['Hello with a numeric channel', [WIRE_VERSION, RecordKind.Hello, 5, 'id']],
    ['Hello with a missing field', [WIRE_VERSION, RecordKind.Hello, 'c']],
    ['Welcome with weight 10001', [WIRE_VERSION, RecordKind.Welcome, 'c', 'r', 'g', 10001, false, 1]],
    ['Welcome with weight -1', [WIRE_VERSION, RecordKind.Welcome, 'c', 'r', 'g', -1, false, 1]],
    ['State with a string weight', [WIRE_VERSION, RecordKind.State, 'c', 'r', 'g', '100', false, 1]],
    ['State with draining as 0', [WIRE_VERSION, RecordKind.State, 'c', 'r', 'g', 100, 0, 1]],
    ['State with a fractional revision', [WIRE_VERSION, RecordKind.State, 'c', 'r', 'g', 100, false, 1.5]],
    ['Send with a string payload', [WIRE_VERSION, RecordKind.Send, 'p', null, 'payload']],
    ['Send with string metadata', [WIRE_VERSION, RecordKind.Send, 'p', 'k=v', new Uint8Array(1)]],
    ['Send with an extra field', [WIRE_VERSION, RecordKind.Send, 'p', null, new Uint8Array(1), 1]],
    ['Reply with correlation 0', [WIRE_VERSION, RecordKind.Reply, 0, new Uint8Array(1)]],
    ['Reply with a string correlation', [WIRE_VERSION, RecordKind.Reply, '5', new Uint8Array(1)]],
    ['Reply with a fractional correlation', [WIRE_VERSION, RecordKind.Reply, 1.5, new Uint8Array(1)]],
    ['ErrorReply with a string body', [WIRE_VERSION, RecordKind.ErrorReply, 3, 'failed']],
    ['ErrorReply with a numeric code', [WIRE_VERSION, RecordKind.ErrorReply, 3, [500, 'failed']]],
    [
      'Request with a negative correlation',
      [WIRE_VERSION, RecordKind.Request, -4, 'p', null, new Uint8Array(1)],
    ],
  ])('on wrong field types: %s', (_name, value) => {
    const d = decodeFrame(pack(value));
    expectNoRecords(d);
    expect(d.malformed[0]?.correlation).toBeUndefined();
  });

  it.each([
    ['a numeric packet', [WIRE_VERSION, RecordKind.Request, 77, 5, null, new Uint8Array(1)]],
    ['string metadata', [WIRE_VERSION, RecordKind.Request, 77, 'p', 'md', new Uint8Array(1)]],
    ['a map payload', [WIRE_VERSION, RecordKind.Request, 77, 'p', null, { a: 1 }]],
    ['a missing payload', [WIRE_VERSION, RecordKind.Request, 77, 'p', null]],
    ['an extra field', [WIRE_VERSION, RecordKind.Request, 77, 'p', null, new Uint8Array(1), 'x']],
  ])(
    'a request with a readable correlation but %s is malformed and carries the correlation',
    (_name, value) => {
      const d = decodeFrame(pack(value));
      expectNoRecords(d, /request/);
      expect(d.malformed).toEqual([{ reason: expect.any(String), correlation: 77 }]);
    },
  );

  it('good records around a bad one still decode, in order', () => {
    const frame = joinRecords([
      encodeSend('a', undefined, payload),
      pack([WIRE_VERSION, RecordKind.Request, 9, 'p', 'bad-md', new Uint8Array(1)]),
      pack([WIRE_VERSION, 99]),
      encodeReply(8, payload),
    ]);
    const d = decodeFrame(frame);
    expect(d.records.map((r) => r.kind)).toEqual([RecordKind.Send, RecordKind.Reply]);
    expect(d.malformed.map((m) => m.correlation)).toEqual([9, undefined]);
  });
});

describe('decodePayload', () => {
  it.each([
    ['empty bytes', bytes()],
    ['a truncated array', bytes(0x92, 0x01)],
    ['a truncated string', bytes(0xa5, 0x61, 0x62)],
    ['trailing bytes after a value', bytes(0x01, 0x02)],
    ['an unknown extension', bytes(0xd4, 0x01, 0x00)],
  ])('returns ok:false on bad bytes: %s', (_name, b) => {
    const r = decodePayload(b);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/^payload: /);
  });
});

describe('a peer cannot run code in the decoder', () => {
  it('a map with a toString (or valueOf) field in the version or kind slot is a malformed record, not a throw', () => {
    for (const hostile of [
      { toString: 0 },
      { valueOf: 1, toString: 'x' },
      { [Symbol.toPrimitive as never]: 1 },
    ]) {
      const d1 = decodeFrame(pack([hostile, RecordKind.Reply, 1, new Uint8Array(1)]));
      expect(d1.records).toHaveLength(0);
      expect(d1.malformed).toHaveLength(1);
      const d2 = decodeFrame(pack([WIRE_VERSION, hostile, 1]));
      expect(d2.malformed[0]?.reason).toMatch(/kind/);
    }
  });
});
