import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  MAX_FRAME_VALUES,
  type NodeRun,
  RecordKind,
  WIRE_VERSION,
  decodeFrame,
  encodeFrameworkFields,
  encodePayload,
  encodeReply,
  joinRecords,
} from '../../../../lib/core/index.js';
import {
  type ObjectAddress,
  type SessionStamp,
  decodeObjectRecord,
  readLoneObjectRecord,
  encodeObjectErrorReply,
  encodeObjectReply,
  encodeObjectRequest,
  encodeObjectSend,
  operationIdString,
  packSessionStamp,
  relayedCallBytes,
  wireAddress,
} from '../../../../lib/spot/wire/index.js';
import { hostileExtSend } from './hostile-call.js';

/**
 * Object records (kinds 60–63): the bytes are what msgpackr writes for the record array of
 * lib/core/object-wire.ts's field order, they read back to what was written, fields a later
 * version appends are ignored, and a short or mistyped record is refused with a reason.
 */

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const name = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.constantFrom('c'.repeat(31), 'c'.repeat(32), '한'.repeat(20), 'c'.repeat(300)),
);
const bin = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.constantFrom(new Uint8Array(0xff), new Uint8Array(0x100), new Uint8Array(0x10000)),
);
const generation = fc.oneof(
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(0, 0x7f, 0x80, 0xffff, 2 ** 32 - 1, 2 ** 32),
);
const correlation = fc.oneof(
  fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 2 ** 32 - 1, 2 ** 32),
);
const TRACEPARENT = '00-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-01';
const trace = encodeFrameworkFields(TRACEPARENT, 'k=v');

const nodeRun = fc.record({ rid: name, nodeGeneration: fc.string({ maxLength: 24 }) });
const address = fc.record({
  objectKind: fc.constantFrom('spot' as const, 'actor' as const),
  id: name,
  fences: fc.record({
    owner: nodeRun,
    objectGeneration: generation,
    authorityOwnerGeneration: generation,
    ownerLeaseGeneration: generation,
  }),
});

/** An operation id as a string, or as a prefix and counter the encoder spells itself. */
const operation = fc.oneof(
  name,
  fc.record({
    prefix: name,
    seq: fc.oneof(
      fc.nat(),
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      fc.constantFrom(35, 36, 1295, 1296),
    ),
  }),
);

const call = fc.record({
  to: address,
  /** The route's bytes written once (`wireAddress`), or left for each call to write. */
  routed: fc.boolean(),
  op: operation,
  packet: fc.string(),
  md: fc.option(bin, { nil: undefined }),
  payload: bin,
  traced: fc.boolean(),
  /** Message Follow relays: written only by a relay (0: absent). */
  hops: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 2 ** 40 })),
});
type Call = typeof call extends fc.Arbitrary<infer C> ? C : never;

const fenceArray = (a: ObjectAddress): unknown[] => [
  a.fences.owner.rid,
  a.fences.owner.nodeGeneration,
  a.fences.objectGeneration,
  a.fences.authorityOwnerGeneration,
  a.fences.ownerLeaseGeneration,
];

const ADDRESS: ObjectAddress = {
  objectKind: 'spot',
  id: 'room-1',
  fences: {
    owner: { rid: 'node-b', nodeGeneration: 'gen-b' },
    objectGeneration: 3,
    authorityOwnerGeneration: 2,
    ownerLeaseGeneration: 7,
  },
};
const ORIGIN = { rid: 'node-a', nodeGeneration: 'gen-a' };
/** A Session owner's stamp as a relayed session call carries it. */
const STAMP_ITEMS: SessionStamp = {
  ownerRid: 'gate-1',
  ownerGeneration: 'g1',
  listener: 'players',
  sessionId: 's-9',
  bindingGeneration: 4,
  sequence: 12,
};
const STAMP = packSessionStamp(STAMP_ITEMS);
const PAYLOAD = encodePayload({ hello: 'room' });

/** A stamp as msgpackr writes it, with `more` items after its six (a later version's). */
const stampOf = (s: SessionStamp, more: unknown[] = []): Uint8Array =>
  encodePayload([
    s.ownerRid,
    s.ownerGeneration,
    s.listener,
    s.sessionId,
    s.bindingGeneration,
    s.sequence,
    ...more,
  ]);

/** A record array written by msgpackr; what the decoder sees in a record a peer built any way it likes. */
const pack = (items: unknown[]): Uint8Array => encodePayload(items);

function sendItems(): unknown[] {
  return [
    WIRE_VERSION,
    RecordKind.ObjectSend,
    'spot',
    'room-1',
    fenceArray(ADDRESS),
    'op-1',
    'join',
    null,
    PAYLOAD,
    null,
  ];
}
function requestItems(): unknown[] {
  return [WIRE_VERSION, RecordKind.ObjectRequest, 9, 'node-a', 'gen-a', ...sendItems().slice(2)];
}
const replyItems = (): unknown[] => [WIRE_VERSION, RecordKind.ObjectReply, 9, 'gen-a', PAYLOAD];
const errorItems = (): unknown[] => [
  WIRE_VERSION,
  RecordKind.ObjectErrorReply,
  9,
  'gen-a',
  ['Rejected', 'full'],
];

describe('object records: bytes and round trips', () => {
  /** The record array msgpackr would write, and the record the decoder must give, for one call. */
  function expectCall(bytes: Uint8Array, route: [number, NodeRun] | undefined, call: Call): void {
    const { to, packet, md, payload, traced, hops } = call;
    const op = operationIdString(call.op);
    const head = route
      ? [RecordKind.ObjectRequest, route[0], route[1].rid, route[1].nodeGeneration]
      : [RecordKind.ObjectSend];
    const tp = traced ? { tp: TRACEPARENT, ts: 'k=v' } : null;
    const items = [
      WIRE_VERSION,
      ...head,
      to.objectKind,
      to.id,
      fenceArray(to),
      op,
      packet,
      md ?? null,
      payload,
      tp,
      ...(hops > 0 ? [hops] : []),
    ];
    expect(hex(bytes)).toBe(hex(pack(items)));
    expect(decodeObjectRecord(bytes)).toEqual({
      kind: head[0],
      ...(route && { correlation: route[0], origin: route[1] }),
      ...to,
      operationId: op,
      packet,
      metadata: md,
      payload,
      trace: traced ? { traceparent: TRACEPARENT, tracestate: 'k=v' } : undefined,
      hops,
    });
    expectLoneAgrees(bytes);
  }

  /** The fast path reads a record to exactly what msgpackr reads, or leaves it to msgpackr. */
  function expectLoneAgrees(bytes: Uint8Array): void {
    const lone = readLoneObjectRecord(Buffer.from(bytes));
    if (lone !== undefined) expect(lone).toEqual(decodeObjectRecord(bytes));
  }

  it('ObjectSend is byte for byte the msgpackr record array and reads back (property)', () => {
    fc.assert(
      fc.property(call, (c) => {
        const to = c.routed ? wireAddress(c.to.objectKind, c.to.id, c.to.fences) : c.to;
        const bytes = encodeObjectSend(
          to,
          c.op,
          c.packet,
          c.md,
          c.payload,
          c.traced ? trace : undefined,
          c.hops,
        );
        expectCall(bytes, undefined, c);
      }),
      { numRuns: 200 },
    );
  });

  it('ObjectRequest carries its reply route first, byte for byte, and reads back (property)', () => {
    fc.assert(
      fc.property(correlation, nodeRun, call, (id, origin, c) => {
        const fields = c.traced ? trace : undefined;
        const to = c.routed ? wireAddress(c.to.objectKind, c.to.id, c.to.fences) : c.to;
        const bytes = encodeObjectRequest(id, origin, to, c.op, c.packet, c.md, c.payload, fields, c.hops);
        expectCall(bytes, [id, origin], c);
      }),
      { numRuns: 200 },
    );
  });

  it('ObjectReply and ObjectErrorReply echo correlation and origin generation (property)', () => {
    fc.assert(
      fc.property(
        correlation,
        fc.string({ maxLength: 24 }),
        bin,
        fc.string(),
        (id, gen, payload, message) => {
          const reply = encodeObjectReply(id, gen, payload);
          expect(hex(reply)).toBe(hex(pack([WIRE_VERSION, RecordKind.ObjectReply, id, gen, payload])));
          expect(decodeObjectRecord(reply)).toEqual({
            kind: RecordKind.ObjectReply,
            correlation: id,
            originGeneration: gen,
            payload,
          });
          expectLoneAgrees(reply);
          const error = encodeObjectErrorReply(id, gen, { code: 'Rejected', message });
          expect(hex(error)).toBe(
            hex(pack([WIRE_VERSION, RecordKind.ObjectErrorReply, id, gen, ['Rejected', message]])),
          );
          expect(decodeObjectRecord(error)).toEqual({
            kind: RecordKind.ObjectErrorReply,
            correlation: id,
            originGeneration: gen,
            error: { code: 'Rejected', message },
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('an error reply keeps encodable details and drops the rest, saying so', () => {
    const withDetails = decodeObjectRecord(
      encodeObjectErrorReply(4, 'g', { code: 'NotFound', message: 'm', details: { id: 'x' } }),
    );
    expect(withDetails).toMatchObject({ error: { code: 'NotFound', message: 'm', details: { id: 'x' } } });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const dropped = decodeObjectRecord(
      encodeObjectErrorReply(4, 'g', { code: 'NotFound', message: 'm', details: circular }),
    );
    expect(dropped).toMatchObject({ error: { code: 'NotFound' } });
    expect((dropped as { error: { message: string; details?: unknown } }).error.message).toMatch(
      /^m \(details could not be encoded/,
    );
    expect((dropped as { error: { details?: unknown } }).error.details).toBeUndefined();
  });

  it('decodeFrame(frame, true) hands the records back whole, and decodeObjectRecord reads those bytes', () => {
    const send = encodeObjectSend(ADDRESS, 'op-1', 'join', undefined, PAYLOAD);
    const request = encodeObjectRequest(9, ORIGIN, ADDRESS, 'op-2', 'join', PAYLOAD, PAYLOAD, trace);
    const reply = encodeObjectReply(9, 'gen-a', PAYLOAD);
    const error = encodeObjectErrorReply(9, 'gen-a', { code: 'Rejected', message: 'full' });
    const frame = decodeFrame(joinRecords([send, encodeReply(1, PAYLOAD), request, reply, error]), true);
    expect(frame.records).toHaveLength(1);
    expect(frame.objects?.map((o) => o.kind)).toEqual([60, 61, 62, 63]);
    const kinds = frame.objects?.map((o) => {
      const r = decodeObjectRecord(o.bytes);
      return typeof r === 'string' ? r : r.kind;
    });
    expect(kinds).toEqual([60, 61, 62, 63]);
    // A reader that does not ask for object records drops them as reserved, never as channel records.
    expect(decodeFrame(send).malformed[0]?.reason).toMatch(/reserved/);
  });
});

describe('object records: later versions and refusals', () => {
  const all: [string, () => unknown[]][] = [
    ['send', sendItems],
    ['request', requestItems],
    ['reply', replyItems],
    ['error reply', errorItems],
  ];

  it.each(all)('%s: fields a later version appends are ignored (nested fences too)', (_n, items) => {
    const plain = decodeObjectRecord(pack(items()));
    expect(typeof plain).not.toBe('string');
    const call = items()[1] === RecordKind.ObjectSend || items()[1] === RecordKind.ObjectRequest;
    // A call's later fields come after its hops slot (0: not relayed) and its session slot (nil: none).
    const later = call ? [0, null, 'later', { x: 1 }] : ['later', { x: 1 }];
    expect(decodeObjectRecord(pack([...items(), ...later]))).toEqual(plain);
    if (call) expect(decodeObjectRecord(pack([...items(), 'later']))).toMatch(/^malformed/);
    const v = items();
    const fences = v.findIndex(Array.isArray);
    if (v[1] === RecordKind.ObjectSend || v[1] === RecordKind.ObjectRequest) {
      v[fences] = [...(v[fences] as unknown[]), 'later'];
      expect(decodeObjectRecord(pack(v))).toEqual(plain);
    }
  });

  it.each(all)('%s: every truncation is refused, as an array and as bytes', (_n, items) => {
    const v = items();
    for (let n = 0; n < v.length; n++) expect(typeof decodeObjectRecord(pack(v.slice(0, n)))).toBe('string');
    const bytes = pack(v);
    for (let n = 0; n < bytes.length; n++)
      expect(typeof decodeObjectRecord(bytes.subarray(0, n))).toBe('string');
  });

  it('bytes after the record are refused (one record per call)', () => {
    const bytes = joinRecords([pack(replyItems()), pack(replyItems())]);
    expect(typeof decodeObjectRecord(bytes)).toBe('string');
  });

  /** [description, record items] that must be refused. */
  const bad: [string, unknown[]][] = [];
  const withSlot = (items: () => unknown[], at: number, value: unknown): unknown[] => {
    const v = items();
    v[at] = value;
    return v;
  };
  const withFence = (items: () => unknown[], fenceAt: number, at: number, value: unknown): unknown[] => {
    const v = items();
    const f = [...(v[fenceAt] as unknown[])];
    f[at] = value;
    v[fenceAt] = f;
    return v;
  };
  bad.push(
    ['another wire version', withSlot(sendItems, 0, 2)],
    ['a channel record kind', withSlot(sendItems, 1, RecordKind.Send)],
    ['object kind not spot/actor', withSlot(sendItems, 2, 'room')],
    ['object kind a number', withSlot(sendItems, 2, 1)],
    ['empty object id', withSlot(sendItems, 3, '')],
    ['fences not an array', withSlot(sendItems, 4, 'node-b')],
    ['empty owner rid', withFence(sendItems, 4, 0, '')],
    ['node generation a number', withFence(sendItems, 4, 1, 5)],
    ['negative object generation', withFence(sendItems, 4, 2, -1)],
    ['fractional authority owner generation', withFence(sendItems, 4, 3, 1.5)],
    ['negative owner lease generation', withFence(sendItems, 4, 4, -3)],
    ['empty operation id', withSlot(sendItems, 5, '')],
    ['packet not a string', withSlot(sendItems, 6, 7)],
    ['metadata a string', withSlot(sendItems, 7, 'md')],
    ['payload not bytes', withSlot(sendItems, 8, { a: 1 })],
    ['trace not a map', withSlot(sendItems, 9, 'tp')],
    ['zero correlation', withSlot(requestItems, 2, 0)],
    ['non-integer correlation', withSlot(requestItems, 2, 1.5)],
    ['string correlation', withSlot(requestItems, 2, '9')],
    ['empty origin rid', withSlot(requestItems, 3, '')],
    ['origin generation missing (nil)', withSlot(requestItems, 4, null)],
    ['request with a negative fence', withFence(requestItems, 7, 2, -1)],
    ['reply with a negative correlation', withSlot(replyItems, 2, -9)],
    ['reply without an origin generation', withSlot(replyItems, 3, null)],
    ['reply payload not bytes', withSlot(replyItems, 4, 'x')],
    ['error reply body not an array', withSlot(errorItems, 4, 'Rejected')],
    ['error reply without a message', withSlot(errorItems, 4, ['Rejected'])],
    ['error reply fractional correlation', withSlot(errorItems, 2, 2.5)],
  );

  it.each(bad)('refuses %s', (_n, items) => {
    expect(typeof decodeObjectRecord(pack(items))).toBe('string');
  });

  it('refuses a send or request holding an ext, even in a field it ignores or one msgpackr reads well', () => {
    const later = [0, null, new Date(0)];
    for (const items of [sendItems, requestItems]) {
      expect(typeof decodeObjectRecord(pack([...items(), 0, null]))).not.toBe('string');
      expect(decodeObjectRecord(pack([...items(), ...later]))).toMatch(/holds an ext/);
    }
    expect(decodeObjectRecord(pack([...replyItems(), new Date(0)]))).toMatchObject({
      kind: RecordKind.ObjectReply,
    });
    expect(decodeObjectRecord(hostileExtSend(ADDRESS.fences))).toMatch(/holds an ext/);
  });

  it('refuses what is not a record, without throwing', () => {
    for (const v of [null, 1, 'x', {}, [], [WIRE_VERSION]])
      expect(typeof decodeObjectRecord(pack(v as unknown[]))).toBe('string');
    expect(typeof decodeObjectRecord(Uint8Array.of(0xc1))).toBe('string');
  });
});

describe('object records: size bounds', () => {
  it('a record over the frame value bound is refused before msgpackr builds it', () => {
    const n = MAX_FRAME_VALUES + 8;
    // One array header of n positive fixints: n + 1 values.
    const bytes = Buffer.alloc(5 + n, 0x01);
    bytes[0] = 0xdd;
    bytes.writeUInt32BE(n, 1);
    expect(decodeObjectRecord(bytes)).toBe(`object record: more than ${MAX_FRAME_VALUES} msgpack values`);
  });

  it('a large payload is one bin: not counted against the bound, read back whole', () => {
    const payload = new Uint8Array(MAX_FRAME_VALUES * 2).fill(0x90);
    const r = decodeObjectRecord(encodeObjectSend(ADDRESS, 'op', 'p', undefined, payload));
    expect(typeof r).not.toBe('string');
    expect((r as { payload: Uint8Array }).payload.length).toBe(payload.length);
  });
});

describe('object records: the lone-record fast path', () => {
  const to: ObjectAddress = {
    objectKind: 'spot',
    id: 'room-17',
    fences: {
      owner: { rid: 'node-a', nodeGeneration: 'ab12' },
      objectGeneration: 9,
      authorityOwnerGeneration: 1,
      ownerLeaseGeneration: 2,
    },
  };
  const payload = Uint8Array.of(1, 2, 3);

  it('reads the usual send, request and reply itself (ASCII names, no trace)', () => {
    const origin: NodeRun = { rid: 'caller-with-a-long-rid-of-more-than-31-bytes', nodeGeneration: 'cd34' };
    const op = 'caller-with-a-long-rid-of-more-than-31-bytes/cd34/1a';
    const cases = [
      encodeObjectSend(to, op, 'join', undefined, payload),
      encodeObjectRequest(7, origin, to, op, 'join', Uint8Array.of(0x80), payload),
      encodeObjectReply(7, 'cd34', payload),
      // As Message Follow relays them: the hop count after the trace.
      encodeObjectSend(to, op, 'join', undefined, payload, undefined, 1),
      encodeObjectRequest(7, origin, to, op, 'join', undefined, payload, undefined, 8),
      // As a session relays them: hops (0, or more once followed) and the session's stamp.
      encodeObjectSend(to, op, 'join', undefined, payload, undefined, 0, STAMP),
      encodeObjectRequest(7, origin, to, op, 'join', undefined, payload, undefined, 0, STAMP),
      encodeObjectRequest(7, origin, to, op, 'join', undefined, payload, undefined, 3, STAMP),
    ];
    for (const bytes of cases) {
      const lone = readLoneObjectRecord(bytes);
      expect(lone).toBeDefined();
      expect(lone).toEqual(decodeObjectRecord(bytes));
    }
  });

  it("reads a session's relayed call as msgpackr does, whatever its stamp's names and numbers (property)", () => {
    const name = fc.string({ unit: fc.constantFrom(...'ab-_.:09XZ'), minLength: 1, maxLength: 40 });
    const count = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 0xffff_ffff }));
    fc.assert(
      fc.property(
        name,
        name,
        name,
        name,
        count,
        count,
        fc.nat(127),
        (rid, gen, listener, sid, g, seq, hops) => {
          const stamp = packSessionStamp({
            ownerRid: rid,
            ownerGeneration: gen,
            listener,
            sessionId: sid,
            bindingGeneration: g,
            sequence: seq,
          });
          for (const bytes of [
            encodeObjectRequest(7, ORIGIN, to, 'op-1', 'move', undefined, payload, undefined, hops, stamp),
            encodeObjectSend(to, 'op-1', 'chat', undefined, payload, undefined, hops, stamp),
          ]) {
            const lone = readLoneObjectRecord(bytes);
            expect(lone).toBeDefined();
            expect(lone).toEqual(decodeObjectRecord(bytes));
          }
        },
      ),
    );
  });

  it('leaves a traced, a non-ASCII or a grown record to msgpackr', () => {
    const traced = encodeObjectSend(
      to,
      'op',
      'join',
      undefined,
      payload,
      encodeFrameworkFields(TRACEPARENT, 'k=v'),
    );
    const unicode = encodeObjectSend({ ...to, id: '방-1' }, 'op', 'join', undefined, payload);
    const grown = pack([WIRE_VERSION, RecordKind.ObjectReply, 7, 'g', payload, 'later']);
    const manyHops = encodeObjectSend(to, 'op', 'join', undefined, payload, undefined, 200);
    const stampedWith = (over: object, more: unknown[] = []) =>
      encodeObjectSend(
        to,
        'op',
        'join',
        undefined,
        payload,
        undefined,
        0,
        stampOf({ ...STAMP_ITEMS, ...over }, more),
      );
    const stamps = [
      stampedWith({ listener: 'joueurs-é' }),
      stampedWith({ ownerGeneration: '' }),
      stampedWith({ sequence: 2 ** 40 }),
      stampedWith({}, ['later']),
    ];
    for (const bytes of [traced, unicode, grown, manyHops, ...stamps])
      expect(readLoneObjectRecord(bytes)).toBeUndefined();
    for (const bytes of stamps)
      expect(decodeObjectRecord(bytes)).toMatchObject({ kind: RecordKind.ObjectSend });
    expect(decodeObjectRecord(grown)).toMatchObject({ kind: RecordKind.ObjectReply, correlation: 7 });
  });
});

describe('a relayed call: the bytes it came in, its address and hops rewritten', () => {
  const hops = fc.integer({ min: 0, max: 8 });
  const stamped = fc.option(fc.constant(STAMP), { nil: undefined });

  it('is byte for byte what the encoder writes for the new owner with one hop more (property)', () => {
    fc.assert(
      fc.property(call, address, hops, stamped, nodeRun, correlation, (c, next, taken, stamp, origin, id) => {
        const fields = c.traced ? trace : undefined;
        const from = wireAddress(c.to.objectKind, c.to.id, c.to.fences);
        const to = wireAddress(next.objectKind, next.id, next.fences);
        const send = (a: ObjectAddress, h: number) =>
          encodeObjectSend(a, c.op, c.packet, c.md, c.payload, fields, h, stamp);
        const request = (a: ObjectAddress, h: number) =>
          encodeObjectRequest(id, origin, a, c.op, c.packet, c.md, c.payload, fields, h, stamp);
        expect(hex(relayedCallBytes(send(from, taken), 'send', to, taken + 1) as Uint8Array)).toBe(
          hex(send(to, taken + 1)),
        );
        expect(hex(relayedCallBytes(request(from, taken), 'request', to, taken + 1) as Uint8Array)).toBe(
          hex(request(to, taken + 1)),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('keeps the fields a later version appends, after its hops', () => {
    const to = wireAddress('spot', 'room-1', { ...ADDRESS.fences, authorityOwnerGeneration: 3 });
    const grown = pack([...requestItems(), 2, null, 'later']);
    expect(decodeObjectRecord(relayedCallBytes(grown, 'request', to, 3) as Uint8Array)).toEqual(
      decodeObjectRecord(
        pack([
          ...requestItems().slice(0, 5),
          'spot',
          'room-1',
          fenceArray(to),
          ...requestItems().slice(8),
          3,
          null,
          'later',
        ]),
      ),
    );
  });

  it('is undefined for bytes that are not a call this version writes (the relay encodes it then)', () => {
    const to = wireAddress('spot', 'room-1', ADDRESS.fences);
    const bytes = pack(sendItems());
    for (const bad of [
      bytes.subarray(0, bytes.length - 3),
      pack(sendItems().slice(0, 9)),
      encodePayload({ a: 1 }),
    ])
      expect(relayedCallBytes(bad, 'send', to, 1)).toBeUndefined();
    expect(relayedCallBytes(bytes, 'send', ADDRESS, 1)).toBeUndefined();
  });

  it('is undefined for a record holding an ext, which a plain walk would cut otherwise than msgpackr', () => {
    const to = wireAddress('spot', 'room-1', ADDRESS.fences);
    expect(relayedCallBytes(hostileExtSend(ADDRESS.fences), 'send', to, 2)).toBeUndefined();
  });
});
