import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import {
  MAX_TRACEPARENT_LENGTH,
  MAX_TRACESTATE_LENGTH,
  RecordKind,
  WIRE_VERSION,
  type WireRecord,
  decodeFrame,
  decodeRecords,
  encodeFrameworkFields,
  encodeMeshRequest,
  encodeMeshSend,
  encodeRequest,
  encodeSend,
  joinRecords,
  readFrameworkFields,
} from '../../../../lib/core/index.js';

/**
 * The framework field (docs/protocol.md#metadata: trace correlation travels apart from application metadata): one
 * optional trailing map on Send, Request, MeshSend and MeshRequest. Absent, the bytes are exactly
 * what they were; present, exactly what msgpackr writes for the longer array.
 */

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true, variableMapSize: true });
const pack = (value: unknown): Uint8Array => packr.pack(value);
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const fieldsOf = (traceparent: string, tracestate?: string) =>
  tracestate === undefined ? { tp: traceparent } : { tp: traceparent, ts: tracestate };

const hexId = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
const traceparent = fc
  .tuple(hexId(32), hexId(16), fc.constantFrom('00', '01'))
  .map(([trace, span, flags]) => `00-${trace}-${span}-${flags}`);
const tracestate = fc.option(fc.string({ minLength: 1, maxLength: 80 }), { nil: undefined });
const name = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('p'.repeat(32), '한'.repeat(90)));
const bin = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.constantFrom(new Uint8Array(0x100).fill(7), new Uint8Array(0x10000).fill(7)),
);
const correlation = fc.oneof(
  fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1),
);

describe('traced call records are written by hand, byte for byte what msgpackr writes (property)', () => {
  it('Send, Request, MeshSend and MeshRequest with a framework field', () => {
    fc.assert(
      fc.property(
        correlation,
        fc.option(name, { nil: undefined }),
        name,
        fc.option(bin, { nil: undefined }),
        bin,
        traceparent,
        tracestate,
        (id, channel, packet, metadata, payload, tp, ts) => {
          const fields = encodeFrameworkFields(tp, ts) as Uint8Array;
          const map = fieldsOf(tp, ts);
          const meta = metadata ?? null;
          const scope = channel ?? null;
          expect(hex(fields)).toBe(hex(pack(map)));
          expect(hex(encodeRequest(id, packet, metadata, payload, fields))).toBe(
            hex(pack([WIRE_VERSION, RecordKind.Request, id, packet, meta, payload, map])),
          );
          expect(hex(encodeSend(packet, metadata, payload, fields))).toBe(
            hex(pack([WIRE_VERSION, RecordKind.Send, packet, meta, payload, map])),
          );
          expect(hex(encodeMeshRequest(id, channel, packet, metadata, payload, fields))).toBe(
            hex(pack([WIRE_VERSION, RecordKind.MeshRequest, id, scope, packet, meta, payload, map])),
          );
          expect(hex(encodeMeshSend(channel, packet, metadata, payload, fields))).toBe(
            hex(pack([WIRE_VERSION, RecordKind.MeshSend, scope, packet, meta, payload, map])),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('without a framework field (undefined) the bytes are the untraced record', () => {
    const payload = pack({ a: 1 });
    expect(hex(encodeRequest(5, 'p', undefined, payload, undefined))).toBe(
      hex(encodeRequest(5, 'p', undefined, payload)),
    );
    expect(hex(encodeMeshSend('c', 'p', undefined, payload, undefined))).toBe(
      hex(pack([WIRE_VERSION, RecordKind.MeshSend, 'c', 'p', null, payload])),
    );
  });
});

describe('traced records decode with their trace (property)', () => {
  it('each kind, alone and in a batch with untraced ones; the lone-call reader leaves them to msgpackr', () => {
    fc.assert(
      fc.property(
        correlation,
        fc.option(name, { nil: undefined }),
        name,
        fc.option(bin, { nil: undefined }),
        bin,
        traceparent,
        tracestate,
        (id, channel, packet, metadata, payload, tp, ts) => {
          const fields = encodeFrameworkFields(tp, ts);
          const trace = { traceparent: tp, tracestate: ts };
          const traced = [
            encodeRequest(id, packet, metadata, payload, fields),
            encodeSend(packet, metadata, payload, fields),
            encodeMeshRequest(id, channel, packet, metadata, payload, fields),
            encodeMeshSend(channel, packet, metadata, payload, fields),
          ];
          for (const frame of traced) {
            const d = decodeFrame(frame);
            expect(d.malformed).toEqual([]);
            expect(d.records[0]?.kind).toBeDefined();
            expect((d.records[0] as { trace?: unknown }).trace).toEqual(trace);
            // The fast path and the general decoder agree, key for key.
            expect(keys(decodeRecords(frame).records)).toEqual(keys(d.records));
          }
          const batch = decodeFrame(
            joinRecords([traced[0] as Uint8Array, encodeSend(packet, metadata, payload)]),
          );
          expect(batch.records.map((r) => (r as { trace?: unknown }).trace)).toEqual([trace, undefined]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('untraced records carry the trace key too, undefined (one object shape), on both read paths', () => {
    const payload = pack(1);
    for (const frame of [
      encodeRequest(9, 'p', undefined, payload),
      encodeMeshRequest(9, undefined, 'p', undefined, payload),
      encodeSend('p', undefined, payload),
    ]) {
      for (const d of [decodeFrame(frame), decodeRecords(frame)]) {
        expect(d.records).toHaveLength(1);
        expect(Object.keys(d.records[0] as object)).toContain('trace');
        expect((d.records[0] as { trace?: unknown }).trace).toBeUndefined();
      }
    }
  });
});

function keys(records: WireRecord[]): string[][] {
  return records.map((r) => Object.keys(r));
}

describe('a malformed framework field makes a malformed record', () => {
  const body = new Uint8Array([1, 2]);
  it.each([
    ['a string', TP],
    ['an array', [TP]],
    ['nil', null],
    ['a number', 7],
    ['bytes', new Uint8Array(3)],
  ])('%s: a request keeps its correlation (so it gets an error reply), a send is dropped', (_n, field) => {
    const request = decodeFrame(pack([WIRE_VERSION, RecordKind.Request, 77, 'p', null, body, field]));
    expect(request.records).toEqual([]);
    expect(request.malformed).toEqual([{ reason: 'malformed request record', correlation: 77 }]);
    const mesh = decodeFrame(pack([WIRE_VERSION, RecordKind.MeshRequest, 78, 'c', 'p', null, body, field]));
    expect(mesh.malformed).toEqual([{ reason: 'malformed mesh request record', correlation: 78 }]);
    const send = decodeFrame(pack([WIRE_VERSION, RecordKind.Send, 'p', null, body, field]));
    expect(send.records).toEqual([]);
    expect(send.malformed).toEqual([{ reason: 'malformed send record' }]);
    const meshSend = decodeFrame(pack([WIRE_VERSION, RecordKind.MeshSend, null, 'p', null, body, field]));
    expect(meshSend.malformed).toEqual([{ reason: 'malformed mesh send record' }]);
  });

  it.each([
    ['tp as a number', { tp: 5 }, undefined],
    ['tp empty', { tp: '' }, undefined],
    ['tp too long', { tp: 'a'.repeat(MAX_TRACEPARENT_LENGTH + 1) }, undefined],
    ['ts without tp', { ts: 'k=v' }, undefined],
    ['ts as bytes', { tp: TP, ts: new Uint8Array(1) }, { traceparent: TP, tracestate: undefined }],
    [
      'ts too long',
      { tp: TP, ts: 'a'.repeat(MAX_TRACESTATE_LENGTH + 1) },
      { traceparent: TP, tracestate: undefined },
    ],
  ])('a map whose %s is unusable loses (part of) its trace, never the message', (_n, field, trace) => {
    const request = decodeFrame(pack([WIRE_VERSION, RecordKind.Request, 77, 'p', null, body, field]));
    expect(request.malformed).toEqual([]);
    expect(request.records).toHaveLength(1);
    const read = request.records[0] as { trace?: { traceparent: string; tracestate?: string } };
    expect(read.trace === undefined ? undefined : { ...read.trace }).toEqual(trace);
  });

  it('two trailing items (length N+2) are malformed too', () => {
    const d = decodeFrame(pack([WIRE_VERSION, RecordKind.Request, 5, 'p', null, body, { tp: TP }, {}]));
    expect(d.malformed).toEqual([{ reason: 'malformed request record', correlation: 5 }]);
  });

  it('keys it does not know are ignored; a map without tp is a field without a trace', () => {
    expect(readFrameworkFields({ tp: TP, later: [1, 2], x: 'y' })).toEqual({
      traceparent: TP,
      tracestate: undefined,
    });
    expect(readFrameworkFields({})).toBeUndefined();
    expect(readFrameworkFields({ later: 1 })).toBeUndefined();
    const d = decodeFrame(pack([WIRE_VERSION, RecordKind.Request, 5, 'p', null, body, { later: 1 }]));
    expect(d.records).toEqual([
      { kind: RecordKind.Request, correlation: 5, packet: 'p', metadata: undefined, payload: body },
    ]);
  });

  it('a peer cannot run code or reach a prototype through the field', () => {
    const hostile = new Map<string, unknown>([
      ['__proto__', { tp: TP }],
      ['toString', 1],
    ]);
    const d = decodeFrame(pack([WIRE_VERSION, RecordKind.Request, 5, 'p', null, body, hostile]));
    expect(d.records).toHaveLength(1);
    expect((d.records[0] as { trace?: unknown }).trace).toBeUndefined();
    expect(readFrameworkFields(new Date())).toBe(false);
    expect(readFrameworkFields(Object.create({ tp: TP }))).toBe(false);
  });
});

describe('encodeFrameworkFields', () => {
  it('no traceparent (or one past its bound) is no field; a tracestate past its bound, or empty, is left out', () => {
    expect(encodeFrameworkFields(undefined, 'k=v')).toBeUndefined();
    expect(encodeFrameworkFields('', undefined)).toBeUndefined();
    expect(encodeFrameworkFields('a'.repeat(MAX_TRACEPARENT_LENGTH + 1), undefined)).toBeUndefined();
    const long = 'a'.repeat(MAX_TRACESTATE_LENGTH + 1);
    expect(packr.unpack(encodeFrameworkFields(TP, long) as Uint8Array)).toEqual({ tp: TP });
    expect(packr.unpack(encodeFrameworkFields(TP, '') as Uint8Array)).toEqual({ tp: TP });
    expect(packr.unpack(encodeFrameworkFields(TP, 'k=v') as Uint8Array)).toEqual({ tp: TP, ts: 'k=v' });
  });
});
