import { describe, expect, it } from '@jest/globals';
import { RecordKind, decodeFrame } from '../../../../lib/core/index.js';
import {
  type RoomPushTarget,
  decodeObjectRecord,
  encodeSessionRoomPush,
} from '../../../../lib/spot/wire/index.js';

/**
 * A Spot's one Push for several sessions of one Session owner (docs/protocol.md#room-pushes): a kind of
 * its own, read only by the object layer, never with a runtime packet.
 */

describe('SessionRoomPush (record 49)', () => {
  const targets = [
    { listener: 'game', sessionId: 's1', bindingGeneration: 2, actorId: 'a' },
    { listener: 'game', sessionId: 's2', bindingGeneration: 1, actorId: 'b' },
  ];
  const bytes = encodeSessionRoomPush({
    spotId: 'lobby',
    packet: 'tick',
    payload: Uint8Array.of(1),
    targets,
  });

  it('is read by a Session owner that knows it', () => {
    expect(decodeObjectRecord(bytes)).toEqual({
      kind: RecordKind.SessionRoomPush,
      spotId: 'lobby',
      packet: 'tick',
      payload: Uint8Array.of(1),
      targets,
    });
  });

  it('is dropped, counted, by a node that does not read object records', () => {
    const frame = decodeFrame(bytes, false);
    expect(frame.records).toEqual([]);
    expect(frame.malformed).toHaveLength(1);
  });

  it('is never read with a runtime packet, with no target, or with a bad target', () => {
    const read = (packet: string, t: unknown[]): unknown =>
      decodeObjectRecord(
        encodeSessionRoomPush({
          spotId: 'lobby',
          packet,
          payload: Uint8Array.of(1),
          targets: t as RoomPushTarget[],
        }),
      );
    expect(read('zlink:x', targets)).toBe("session room push of the runtime's packet 'zlink:x'");
    expect(read('tick', [])).toBe('malformed session room push record');
    expect(read('tick', [{ ...targets[0], bindingGeneration: -1 }])).toBe(
      'malformed session room push target',
    );
  });
});
