import { describe, expect, it } from '@jest/globals';
import { Packr } from 'msgpackr';
import {
  type MeshNodeState,
  RecordKind,
  decodeFrame,
  encodeMeshPing,
  encodeMeshRequest,
  encodeMeshSend,
  encodeMeshState,
  encodePayload,
  encodeReply,
  joinRecords,
} from '../../../lib/core/index.js';

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
