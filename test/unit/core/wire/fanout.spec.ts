import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import {
  RecordKind,
  WIRE_VERSION,
  decodeFanoutBeacon,
  encodeFanoutBeacon,
  encodeFanoutEvent,
  isBeaconTopic,
  normalizeOptions,
  readFanoutEvents,
} from '../../../../lib/core/index.js';
import { configError } from '../config-error.js';

/** Classic fanout records and options (issue 6, docs/protocol.md#classic-fanout). */

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });

function read(frame: Uint8Array) {
  const events: [number, string, Buffer][] = [];
  const malformed: string[] = [];
  readFanoutEvents(
    frame,
    (seq, packet, payload) => events.push([seq, packet, Buffer.from(payload)]),
    (r) => malformed.push(r),
  );
  return { events, malformed };
}

describe('fanout records', () => {
  it('the reserved topic is exactly 01 5A 4C 46 31', () => {
    expect(isBeaconTopic(Buffer.from([1, 0x5a, 0x4c, 0x46, 0x31]))).toBe(true);
    for (const other of [
      [1, 0x5a, 0x4c, 0x46],
      [1, 0x5a, 0x4c, 0x46, 0x31, 0],
      [1, 0x5a, 0x4c, 0x46, 0x32],
    ])
      expect(isBeaconTopic(Buffer.from(other))).toBe(false);
  });

  it('hand-written events are what msgpackr writes, and a batch reads back in order (fast path or not)', () => {
    const name = fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom('é', 'x'.repeat(40)));
    const seq = fc.oneof(
      fc.nat(),
      fc.constantFrom(127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, 2 ** 40),
    );
    const events = fc.array(fc.tuple(seq, name, fc.uint8Array({ maxLength: 300 })), {
      minLength: 1,
      maxLength: 5,
    });
    fc.assert(
      fc.property(events, (list) => {
        for (const [s, p, b] of list) {
          expect(Buffer.from(encodeFanoutEvent(s, p, b))).toEqual(
            Buffer.from(packr.pack([WIRE_VERSION, RecordKind.FanoutEvent, s, p, b])),
          );
        }
        const frame = Buffer.concat(list.map(([s, p, b]) => encodeFanoutEvent(s, p, b)));
        const out = read(frame);
        expect(out.malformed).toEqual([]);
        expect(out.events).toEqual(list.map(([s, p, b]) => [s, p, Buffer.from(b)]));
      }),
    );
  });

  it('what is not an event is reported, never thrown; the events before it still arrive', () => {
    const good = encodeFanoutEvent(1, 'p', new Uint8Array([1]));
    expect(read(Buffer.concat([good, Buffer.from([0xc1])])).events).toHaveLength(1);
    expect(read(Buffer.from([0xc1])).malformed).toHaveLength(1);
    expect(read(packr.pack([WIRE_VERSION, RecordKind.Send, 'p'])).malformed[0]).toContain(
      'not a fanout event',
    );
    expect(
      read(packr.pack([WIRE_VERSION, RecordKind.FanoutEvent, -1, 'p', new Uint8Array()])).malformed,
    ).toHaveLength(1);
    expect(read(packr.pack([9, RecordKind.FanoutEvent, 1, 'p', new Uint8Array()])).malformed[0]).toContain(
      'version',
    );
  });

  it('a beacon names channel, RID and generation', () => {
    expect(decodeFanoutBeacon(encodeFanoutBeacon('news', 'pub-1', 'g1'))).toEqual({
      kind: RecordKind.FanoutBeacon,
      channel: 'news',
      rid: 'pub-1',
      generation: 'g1',
    });
    expect(typeof decodeFanoutBeacon(Buffer.from([0x90]))).toBe('string');
  });

  it('a beacon with fields a later version appends still reads; one short of a field does not', () => {
    const grown = packr.pack([WIRE_VERSION, RecordKind.FanoutBeacon, 'news', 'pub-1', 'g1', 'key', 7]);
    expect(decodeFanoutBeacon(grown)).toEqual({
      kind: RecordKind.FanoutBeacon,
      channel: 'news',
      rid: 'pub-1',
      generation: 'g1',
    });
    const short = packr.pack([WIRE_VERSION, RecordKind.FanoutBeacon, 'news', 'pub-1']);
    expect(decodeFanoutBeacon(short)).toBe('not a liveness beacon');
  });
});

describe('fanout options', () => {
  it('normalizes a publisher and a subscriber with their defaults', () => {
    const o = normalizeOptions({
      fanout: {
        news: {
          publisher: {},
          subscriber: { connect: ['tcp://127.0.0.1:7000'], topics: ['a', Buffer.from([1, 2])] },
        },
      },
    });
    expect(o.fanout.get('news')).toMatchObject({
      publisher: { noDrop: false, sendHighWaterMark: 1000, beaconIntervalMs: 1000, rid: undefined },
      subscriber: { discovery: 'manual', receiveHighWaterMark: 1000, silenceTimeoutMs: 5000 },
    });
    expect(o.fanout.get('news')?.subscriber?.topics?.map((t) => t.form)).toEqual(['a', Buffer.from([1, 2])]);
  });

  const store = { redis: 'redis://127.0.0.1:6379' };
  it.each<[string, unknown, string]>([
    [
      'noDrop on a subscriber',
      { subscriber: { connect: ['tcp://h:1'], noDrop: true } },
      'fanout.news.subscriber.noDrop',
    ],
    ['a non-boolean noDrop', { publisher: { noDrop: 'yes' } }, 'fanout.news.publisher.noDrop'],
    ['a subscriber with nowhere to connect', { subscriber: {} }, 'fanout.news.subscriber.connect'],
    [
      'auto discovery without a store',
      { subscriber: { discovery: 'auto' } },
      'fanout.news.subscriber.discovery',
    ],
    [
      'the reserved topic',
      { subscriber: { connect: ['tcp://h:1'], topics: ['\u0001ZLF1'] } },
      'fanout.news.subscriber.topics[0]',
    ],
    [
      'an empty topic',
      { subscriber: { connect: ['tcp://h:1'], topics: [''] } },
      'fanout.news.subscriber.topics[0]',
    ],
    ['neither role', {}, 'fanout.news'],
  ])('%s fails naming the field', (_what, news, field) => {
    expect(configError({ fanout: { news } }).message).toContain(field);
  });

  it('a subscriber takes endpoints by hand or from the store, not both', () => {
    const e = configError({
      locationStore: store,
      fanout: { news: { subscriber: { discovery: 'auto', connect: ['tcp://h:1'] } } },
    });
    expect(e.message).toContain('fanout.news.subscriber.connect');
    expect(
      normalizeOptions({ locationStore: store, fanout: { news: { subscriber: { discovery: 'auto' } } } }),
    ).toBeTruthy();
  });
});
