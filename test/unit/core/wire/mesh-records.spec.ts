import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import {
  type MeshNodeState,
  RecordKind,
  WIRE_VERSION,
  decodeFrame,
  encodeMeshPing,
  encodeMeshRequest,
  encodeMeshSend,
  encodeMeshState,
  encodePayload,
  encodeReply,
  joinRecords,
} from '../../../../lib/core/index.js';

/** RouteMesh records round-trip, batch with ClientServer records, and malformed ones are named, never thrown. */

const packr = new Packr({ useRecords: false });
const state: MeshNodeState = {
  mesh: 'game',
  rid: 'node-a',
  generation: 'g1',
  objectRole: 'none',
  memberships: [
    { channel: 'match', weight: 100, draining: false },
    { channel: 'chat', weight: 0, draining: true },
  ],
  revision: 3,
};

describe('mesh records', () => {
  it('hello, welcome and state carry the node state', () => {
    for (const kind of [RecordKind.MeshHello, RecordKind.MeshWelcome, RecordKind.MeshState] as const) {
      const { records, malformed } = decodeFrame(encodeMeshState(kind, state));
      expect(malformed).toEqual([]);
      expect(records).toEqual([{ kind, ...state }]);
    }
  });

  it('a batch mixes mesh sends, requests, pings and replies in order', () => {
    const payload = encodePayload({ x: 1 });
    const frame = joinRecords([
      encodeMeshSend('match', 'm.join', undefined, payload),
      encodeMeshRequest(7, undefined, 'node.cmd', Uint8Array.of(1, 2), payload),
      encodeMeshPing(),
      encodeReply(9, payload),
    ]);
    const { records, malformed } = decodeFrame(frame);
    expect(malformed).toEqual([]);
    expect(records.map((r) => r.kind)).toEqual([
      RecordKind.MeshSend,
      RecordKind.MeshRequest,
      RecordKind.MeshPing,
      RecordKind.Reply,
    ]);
    expect(records[0]).toMatchObject({ channel: 'match', packet: 'm.join', metadata: undefined });
    expect(records[1]).toMatchObject({ correlation: 7, channel: undefined, packet: 'node.cmd' });
  });

  it.each<[string, unknown[], number | undefined]>([
    ['a request with a bad packet keeps its correlation', [1, 25, 5, null, 7, null, new Uint8Array(1)], 5],
    ['a request without a correlation', [1, 25, 'x', null, 'p', null, new Uint8Array(1)], undefined],
    ['a send with a numeric channel', [1, 24, 3, 'p', null, new Uint8Array(1)], undefined],
    ['a ping with extra fields', [1, 23, 0], undefined],
    ['a state with a bad membership', [1, 22, 'game', 'r', 'g', 'none', [['c', 20000, false]], 1], undefined],
    ['a state with an unknown object role', [1, 20, 'game', 'r', 'g', 'boss', [], 1], undefined],
    ['a state with an empty rid', [1, 21, 'game', '', 'g', 'none', [], 1], undefined],
    ['an unknown kind', [1, 99], undefined],
  ])('%s is malformed', (_what, record, correlation) => {
    const { records, malformed } = decodeFrame(packr.pack(record));
    expect(records).toEqual([]);
    expect(malformed).toHaveLength(1);
    expect(malformed[0]?.correlation).toBe(correlation);
  });
});

describe('mesh sends and requests are written by hand', () => {
  const edges = (...points: number[]): number[] => points.flatMap((p) => [p - 1, p, p + 1]);
  const name = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom(...edges(32, 256).map((n) => 'c'.repeat(n)), '한'.repeat(90)),
  );
  const bin = fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc.constantFrom(...edges(0x100, 0x10000).map((n) => new Uint8Array(n).fill(7))),
  );
  const correlation = fc.oneof(
    fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    fc.constantFrom(...edges(0x80, 0x100, 0x10000, 2 ** 32)),
  );

  it('byte for byte what msgpackr writes for the same record array, and read back alike (property)', () => {
    const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
    fc.assert(
      fc.property(
        correlation,
        fc.option(name, { nil: undefined }),
        name,
        fc.option(bin, { nil: undefined }),
        bin,
        (id, channel, packet, metadata, payload) => {
          const fields = [channel ?? null, packet, metadata ?? null, payload];
          const request = encodeMeshRequest(id, channel, packet, metadata, payload);
          expect(hex(request)).toBe(
            hex(encodePayload([WIRE_VERSION, RecordKind.MeshRequest, id, ...fields])),
          );
          const send = encodeMeshSend(channel, packet, metadata, payload);
          expect(hex(send)).toBe(hex(encodePayload([WIRE_VERSION, RecordKind.MeshSend, ...fields])));
          expect(decodeFrame(request).records[0]).toMatchObject({ correlation: id, channel, packet });
        },
      ),
      { numRuns: 300 },
    );
  });
});
