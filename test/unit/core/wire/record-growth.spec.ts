import { describe, expect, it } from '@jest/globals';
import { Packr } from 'msgpackr';
import {
  type MeshNodeState,
  RecordKind,
  type ServerState,
  WIRE_VERSION,
  decodeFrame,
  encodeHello,
  encodeMeshState,
  encodePayload,
  encodeReply,
  encodeServerState,
  joinRecords,
} from '../../../../lib/core/index.js';

/**
 * Handshake and state records are forward-compatible: a later version may append fields, and this
 * reader takes the ones it knows and ignores the rest. A record missing a field is still refused.
 */

const server: ServerState = {
  channel: 'orders',
  serverRid: 'srv-1',
  generation: 'g1',
  weight: 100,
  draining: false,
  revision: 4,
};
const node: MeshNodeState = {
  mesh: 'game',
  rid: 'node-a',
  generation: 'g1',
  objectRole: 'server',
  memberships: [{ channel: 'match', weight: 50, draining: false }],
  revision: 2,
};

const packr = new Packr({ useRecords: false });
/** The record array as the encoder writes it. */
const fieldsOf = (record: Uint8Array): unknown[] => packr.unpack(record) as unknown[];

/** Each record with all the fields it has today (mesh states: their optional object types and topics too). */
const hosting: MeshNodeState = { ...node, objectTypes: ['room', 'player'] };
const subscribing: MeshNodeState = { ...hosting, topics: [{ channel: 'news', topic: 'milestone' }] };
const cases: [string, Uint8Array][] = [
  ['Hello', encodeHello('orders', 'client-1')],
  ['Welcome', encodeServerState(RecordKind.Welcome, server)],
  ['State', encodeServerState(RecordKind.State, server)],
  ['MeshHello', encodeMeshState(RecordKind.MeshHello, subscribing)],
  ['MeshWelcome', encodeMeshState(RecordKind.MeshWelcome, subscribing, new Uint8Array(32).fill(7))],
  ['MeshState', encodeMeshState(RecordKind.MeshState, subscribing)],
];

describe('handshake and state records with fields this version does not know', () => {
  it.each(cases)('%s with trailing fields decodes to the same record', (_name, record) => {
    const known = decodeFrame(record).records;
    expect(known).toHaveLength(1);
    for (const extra of [[7], ['later', { a: 1 }, null], [new Uint8Array(3)]]) {
      const grown = encodePayload([...fieldsOf(record), ...extra]);
      const decoded = decodeFrame(grown);
      expect(decoded.malformed).toEqual([]);
      expect(decoded.records).toEqual(known);
    }
  });

  it('a grown record in a batch leaves its neighbours alone', () => {
    const grown = encodePayload([...fieldsOf(encodeHello('orders', 'c')), 'extra']);
    const decoded = decodeFrame(joinRecords([grown, encodeReply(3, encodePayload(1))]));
    expect(decoded.malformed).toEqual([]);
    expect(decoded.records.map((r) => r.kind)).toEqual([RecordKind.Hello, RecordKind.Reply]);
  });

  it('a mesh membership with trailing fields decodes to the fields it knows', () => {
    const grown = encodePayload([
      WIRE_VERSION,
      RecordKind.MeshState,
      'game',
      'node-a',
      'g1',
      'none',
      [['match', 50, false, ['room', 'lobby']]],
      2,
    ]);
    const decoded = decodeFrame(grown);
    expect(decoded.malformed).toEqual([]);
    expect(decoded.records[0]).toMatchObject({
      memberships: [{ channel: 'match', weight: 50, draining: false }],
    });
  });

  it.each(cases)('%s short of a required field is refused (dropped as malformed)', (_name, record) => {
    const fields = fieldsOf(record);
    // A mesh state's fields after `revision` (object types, proof, topics) are optional.
    const required = fields.length === 11 ? 8 : fields.length;
    for (let n = 2; n < required; n++) {
      const decoded = decodeFrame(encodePayload(fields.slice(0, n)));
      expect(decoded.records).toEqual([]);
      expect(decoded.malformed).toHaveLength(1);
      expect(decoded.malformed[0]?.correlation).toBeUndefined();
    }
  });

  it('a membership short of a field is refused', () => {
    const decoded = decodeFrame(
      encodePayload([WIRE_VERSION, RecordKind.MeshState, 'game', 'node-a', 'g1', 'none', [['match', 50]], 2]),
    );
    expect(decoded.records).toEqual([]);
    expect(decoded.malformed).toHaveLength(1);
  });

  it('a truncated grown record is refused', () => {
    const grown = encodePayload([...fieldsOf(encodeServerState(RecordKind.State, server)), 'extra']);
    for (let len = 0; len < grown.length; len++) {
      expect(decodeFrame(grown.subarray(0, len)).records).toEqual([]);
    }
  });
});

describe('the first grown field: the object types a mesh node hosts', () => {
  it('round-trips after revision, and is not written when there are none', () => {
    for (const kind of [RecordKind.MeshHello, RecordKind.MeshWelcome, RecordKind.MeshState] as const) {
      expect(decodeFrame(encodeMeshState(kind, hosting)).records).toEqual([{ kind, ...hosting }]);
      expect(fieldsOf(encodeMeshState(kind, hosting))).toHaveLength(9);
      const none = encodeMeshState(kind, { ...node, objectTypes: [] });
      expect(Buffer.from(none).equals(Buffer.from(encodeMeshState(kind, node)))).toBe(true);
      expect(decodeFrame(none).records[0]).not.toHaveProperty('objectTypes');
    }
  });

  it('fields after it are still ignored', () => {
    const grown = encodePayload([...fieldsOf(encodeMeshState(RecordKind.MeshState, hosting)), 'later']);
    expect(decodeFrame(grown).records).toEqual([{ kind: RecordKind.MeshState, ...hosting }]);
  });

  it.each<[string, unknown]>([
    ['a string', 'room'],
    ['an empty name', ['room', '']],
    ['a numeric name', [3]],
    ['nil', null],
  ])('as %s makes the record malformed', (_what, types) => {
    const record = [...fieldsOf(encodeMeshState(RecordKind.MeshHello, node)), types];
    const decoded = decodeFrame(encodePayload(record));
    expect(decoded.records).toEqual([]);
    expect(decoded.malformed).toEqual([{ reason: 'malformed mesh node state record' }]);
  });
});

describe('the second grown field: the Logical Multicast topics a mesh node advertises', () => {
  it('round-trips after the proof slot (nil without a proof), and is not written when there are none', () => {
    for (const kind of [RecordKind.MeshHello, RecordKind.MeshWelcome, RecordKind.MeshState] as const) {
      const fields = fieldsOf(encodeMeshState(kind, subscribing));
      expect(fields).toHaveLength(11);
      expect(fields.slice(8)).toEqual([['room', 'player'], null, [['news', 'milestone']]]);
      expect(decodeFrame(encodeMeshState(kind, subscribing)).records).toEqual([{ kind, ...subscribing }]);
      const none = encodeMeshState(kind, { ...hosting, topics: [] });
      expect(Buffer.from(none).equals(Buffer.from(encodeMeshState(kind, hosting)))).toBe(true);
      expect(decodeFrame(none).records[0]).not.toHaveProperty('topics');
    }
  });

  it('beside a CURVE proof, both are read', () => {
    const proof = new Uint8Array(32).fill(9);
    const record = encodeMeshState(RecordKind.MeshHello, subscribing, proof);
    expect(decodeFrame(record).records).toEqual([{ kind: RecordKind.MeshHello, ...subscribing, proof }]);
  });

  it('a node hosting no types still advertises its topics (the types slot written empty)', () => {
    const record = encodeMeshState(RecordKind.MeshState, { ...node, topics: subscribing.topics });
    expect(decodeFrame(record).records).toEqual([
      { kind: RecordKind.MeshState, ...node, topics: subscribing.topics },
    ]);
  });

  it.each<[string, unknown]>([
    ['a string', 'news'],
    ['a lone pair', ['news', 'milestone']],
    ['an empty topic', [['news', '']]],
    ['an empty channel', [['', 'milestone']]],
    ['a pair short of its topic', [['news']]],
    ['a numeric topic', [['news', 3]]],
    ['nil', null],
  ])('as %s makes the record malformed', (_what, topics) => {
    const record = [...fieldsOf(encodeMeshState(RecordKind.MeshState, hosting)), null, topics];
    const decoded = decodeFrame(encodePayload(record));
    expect(decoded.records).toEqual([]);
    expect(decoded.malformed).toEqual([{ reason: 'malformed mesh node state record' }]);
  });
});

describe('the third grown field: the node drains', () => {
  it('round-trips after topics, written only when true (an empty topics slot before it)', () => {
    const draining: MeshNodeState = { ...node, draining: true };
    for (const kind of [RecordKind.MeshHello, RecordKind.MeshWelcome, RecordKind.MeshState] as const) {
      expect(decodeFrame(encodeMeshState(kind, draining)).records).toEqual([{ kind, ...draining }]);
      expect(fieldsOf(encodeMeshState(kind, draining)).slice(8)).toEqual([[], null, [], true]);
      const notDraining = encodeMeshState(kind, { ...node, draining: false });
      expect(Buffer.from(notDraining).equals(Buffer.from(encodeMeshState(kind, node)))).toBe(true);
      expect(decodeFrame(notDraining).records[0]).not.toHaveProperty('draining');
    }
    const both: MeshNodeState = { ...subscribing, draining: true };
    expect(decodeFrame(encodeMeshState(RecordKind.MeshState, both)).records).toEqual([
      { kind: RecordKind.MeshState, ...both },
    ]);
  });
});
