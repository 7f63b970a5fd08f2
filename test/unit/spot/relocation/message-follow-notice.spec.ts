import { describe, expect, it } from '@jest/globals';
import { RecordKind, type ZLinkEvent } from '../../../../lib/core/index.js';
import { type ObjectRouteFences, encodeMessageFollow } from '../../../../lib/spot/wire/index.js';
import type { ObjectLayer } from '../../../../lib/spot/index.js';
import { FakeLink, RUN_A, RUN_B, objectLayer, route } from '../fixtures.js';

/**
 * The messageFollow notice on the sending runtime (docs/protocol.md#message-follow): it drops the cached
 * route the relayed message came on — only that one, never a newer entry — and says so in an
 * `object_route` event (`moved`); the next call reads the store.
 */

function layer() {
  const link = new FakeLink();
  const { objects, events } = objectLayer(link, 'client');
  const seen: ZLinkEvent[] = [];
  events.subscribe((e) => seen.push(e), { perMessage: false });
  return { objects, link, seen };
}

/** Caches `room-1`'s route on RUN_B with `fences`' generations. */
function cache(objects: ObjectLayer, fences: Partial<ObjectRouteFences>): void {
  const ticket = objects['cache'].open('spot', 'room-1');
  objects['cache'].close(ticket, route('room-1', { owner: RUN_B, ...fences }));
}

const notice = (source: ObjectRouteFences) =>
  encodeMessageFollow({
    objectKind: 'spot',
    id: 'room-1',
    source,
    target: { ...source, owner: { rid: 'node-c', nodeGeneration: 'gc1' }, authorityOwnerGeneration: 2 },
    hops: 1,
    queued: 0,
    operationId: 'op-1',
    replyRoute: { correlation: 9, origin: RUN_A },
  });

const OLD: ObjectRouteFences = {
  owner: RUN_B,
  objectGeneration: 1,
  authorityOwnerGeneration: 1,
  ownerLeaseGeneration: 1,
};

describe('ObjectLayer: a messageFollow notice', () => {
  it('drops the cached route the message came on, with an invalidated event (moved)', () => {
    const { objects, link, seen } = layer();
    cache(objects, {});
    link.deliver(RecordKind.MessageFollow, notice(OLD));
    expect(objects['cache'].lookup('spot', 'room-1')).toBeUndefined();
    expect(seen).toContainEqual(
      expect.objectContaining({ type: 'object_route', result: 'invalidated', id: 'room-1', reason: 'moved' }),
    );
  });

  it('keeps a newer entry: a notice for another route changes nothing', () => {
    const { objects, link, seen } = layer();
    // The caller already learnt the new owner's route (authority owner generation 2).
    cache(objects, { authorityOwnerGeneration: 2 });
    link.deliver(RecordKind.MessageFollow, notice(OLD));
    expect(objects['cache'].lookup('spot', 'room-1')).toMatchObject({ authorityOwnerGeneration: 2 });
    expect(seen.filter((e) => e.type === 'object_route')).toEqual([]);
  });

  it('a malformed notice is dropped and reported, nothing else happens', () => {
    const { objects, link, seen } = layer();
    cache(objects, {});
    const bad = encodeMessageFollow({
      objectKind: 'spot',
      id: 'room-1',
      source: OLD,
      target: OLD,
      hops: -1,
      queued: 0,
      operationId: 'op-1',
      replyRoute: undefined,
    });
    link.deliver(RecordKind.MessageFollow, bad);
    expect(objects['cache'].lookup('spot', 'room-1')).toBeDefined();
    expect(seen).toContainEqual(
      expect.objectContaining({ type: 'protocol_error', reason: 'malformed messageFollow record' }),
    );
  });
});
