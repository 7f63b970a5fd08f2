import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
import { MAX_FOLLOW_HOPS, RecordKind, encodePayload } from '../../../../lib/core/index.js';
import {
  type ObjectRouteFences,
  decodeObjectRecord,
  encodeObjectRequest,
  encodeObjectSend,
} from '../../../../lib/spot/wire/index.js';
import { FakeLink, MESH, RUN_A, RUN_B, objectLayer } from '../fixtures.js';
import { hostileExtSend } from '../wire/hostile-call.js';
import { NOTICE_DELAY_MS } from '../../../../lib/spot/timing/index.js';

/**
 * Message Follow on the source of a move (docs/protocol.md#message-follow): a call on the route this node held
 * goes on to the new owner with the same operation id, incarnation, payload and reply route, one hop
 * more, and the sender is told once (record 50); another incarnation is `InvalidOperation`, an expired
 * route or a ninth hop `Unavailable` with the route for the caller to drop. Nothing runs here.
 */

const SOURCE: ObjectRouteFences = {
  owner: RUN_A,
  objectGeneration: 4,
  authorityOwnerGeneration: 1,
  ownerLeaseGeneration: 1,
};
const TARGET: ObjectRouteFences = {
  owner: { rid: 'node-c', nodeGeneration: 'gc1' },
  objectGeneration: 4,
  authorityOwnerGeneration: 2,
  ownerLeaseGeneration: 3,
};
const KEY = { mesh: MESH, kind: 'spot' as const, id: 'room-1' };
const PAYLOAD = encodePayload({ say: 'hi' });

function source(followMs = 30_000) {
  const link = new FakeLink();
  return { objects: objectLayer(link, 'server', followMs).objects, link };
}

const address = (fences: ObjectRouteFences) => ({ objectKind: 'spot' as const, id: 'room-1', fences });
const request = (correlation: number, fences = SOURCE, hops = 0) =>
  encodeObjectRequest(
    correlation,
    RUN_B,
    address(fences),
    `op-${correlation}`,
    'chat',
    undefined,
    PAYLOAD,
    undefined,
    hops,
  );

const decoded = (link: FakeLink) =>
  link.answered.map((a) => ({ to: a.to, record: decodeObjectRecord(a.bytes) }));

describe('Message Follow on the source', () => {
  it('relays a request to the new owner with its identity and reply route, and tells the sender once', async () => {
    const { objects, link } = source();
    objects.followRoutes.install(KEY, SOURCE, TARGET);
    link.deliver(RecordKind.ObjectRequest, request(7));
    link.deliver(RecordKind.ObjectRequest, request(8));
    // The notice leaves a moment after the relays (NOTICE_DELAY_MS).
    expect(link.answered).toHaveLength(2);
    await sleep(NOTICE_DELAY_MS + 5);
    const out = decoded(link);
    expect(out.map((o) => [o.to, (o.record as { kind: number }).kind])).toEqual([
      ['node-c', RecordKind.ObjectRequest],
      ['node-c', RecordKind.ObjectRequest],
      ['node-b', RecordKind.MessageFollow],
    ]);
    expect(out[0]?.record).toEqual({
      kind: RecordKind.ObjectRequest,
      correlation: 7,
      origin: RUN_B,
      objectKind: 'spot',
      id: 'room-1',
      fences: TARGET,
      operationId: 'op-7',
      packet: 'chat',
      metadata: undefined,
      payload: expect.any(Uint8Array),
      trace: undefined,
      hops: 1,
    });
    expect(Buffer.from((out[0]?.record as { payload: Uint8Array }).payload)).toEqual(Buffer.from(PAYLOAD));
    expect(out[2]?.record).toMatchObject({
      source: SOURCE,
      target: TARGET,
      hops: 1,
      operationId: 'op-7',
      replyRoute: { correlation: 7, origin: RUN_B },
    });
  });

  it('relays a send too, one hop more, and says nothing back on a relayed message', async () => {
    const { objects, link } = source();
    objects.followRoutes.install(KEY, SOURCE, TARGET);
    link.deliver(
      RecordKind.ObjectSend,
      encodeObjectSend(address(SOURCE), 'op-s', 'chat', undefined, PAYLOAD, undefined, 3),
    );
    await sleep(NOTICE_DELAY_MS + 5);
    const out = decoded(link);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      to: 'node-c',
      record: { kind: RecordKind.ObjectSend, hops: 4, fences: TARGET },
    });
  });

  it('a call whose bytes hide fields in an ext is dropped and counted, never relayed', async () => {
    const link = new FakeLink();
    const { objects, events } = objectLayer(link, 'server');
    const errors: string[] = [];
    events.subscribe((e) => {
      if (e.type === 'protocol_error') errors.push(e.reason);
    });
    objects.followRoutes.install(KEY, SOURCE, TARGET);
    link.deliver(RecordKind.ObjectSend, hostileExtSend(SOURCE));
    link.deliver(RecordKind.ObjectRequest, request(11));
    await sleep(NOTICE_DELAY_MS + 5);
    expect(errors).toEqual([expect.stringMatching(/holds an ext/)]);
    expect(decoded(link).map((o) => o.record)).toEqual([
      expect.objectContaining({ kind: RecordKind.ObjectRequest, correlation: 11, hops: 1 }),
      expect.objectContaining({ kind: RecordKind.MessageFollow }),
    ]);
  });

  it('another incarnation is InvalidOperation; a ninth hop is Unavailable with the route to drop', () => {
    const { objects, link } = source();
    objects.followRoutes.install(KEY, SOURCE, TARGET);
    link.deliver(RecordKind.ObjectRequest, request(9, { ...SOURCE, objectGeneration: 5 }));
    link.deliver(RecordKind.ObjectRequest, request(10, SOURCE, MAX_FOLLOW_HOPS));
    const out = decoded(link);
    expect(out.map((o) => o.to)).toEqual(['node-b', 'node-b']);
    expect(out[0]?.record).toMatchObject({
      kind: RecordKind.ObjectErrorReply,
      correlation: 9,
      error: { code: 'ObjectInvalid', details: { reason: 'generationMismatch' } },
    });
    expect(out[1]?.record).toMatchObject({
      kind: RecordKind.ObjectErrorReply,
      correlation: 10,
      error: { code: 'ObjectStale', details: { reason: 'followHops', id: 'room-1' } },
    });
  });

  it('without a route (never moved, or Message Follow off) the call gets the ordinary stale answer', () => {
    const { objects, link } = source(0);
    expect(objects.followRoutes.install(KEY, SOURCE, TARGET)).toBeUndefined();
    link.deliver(RecordKind.ObjectRequest, request(11));
    expect(decoded(link)).toEqual([
      {
        to: 'node-b',
        record: expect.objectContaining({
          kind: RecordKind.ObjectErrorReply,
          error: expect.objectContaining({
            code: 'ObjectStale',
            details: expect.objectContaining({ reason: 'staleRoute' }),
          }),
        }),
      },
    ]);
  });
});
