/**
 * Logical Multicast between runtimes on real sockets (issue 31): what a subscribed handler sees, a
 * publish's argument checks and its one terminal, a full Spot queue refusing and counting, and a
 * node's advertisement following its Spots — the last one gone, no record is sent there any more.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  MemoryLocationStore,
  type MulticastMetricsSnapshot,
  type ObjectClassDescription,
  type ZLinkEvent,
  type ZLinkMulticastEvent,
  type ZLinkObjectContext,
  type ZLinkRuntime,
} from '../../../lib/index.js';
import {
  RecordKind,
  WIRE_VERSION,
  decodePayload,
  encodeMeshState,
  encodePayload,
} from '../../../lib/core/index.js';
import { encodeSpotEvent } from '../../../lib/spot/wire/index.js';
import { Gate, waitFor } from '../../helpers/index.js';
import { FakePeer, fakeState } from '../route-mesh/harness.js';
import { objectClass, objectMeshOptions, registry, startRuntime } from './harness.js';

interface Seen {
  spot: string;
  packet: string;
  payload: unknown;
  multicast: ZLinkMulticastEvent | undefined;
}

const seen: Seen[] = [];
let gate: Gate | undefined;

/** Subscribes to `news`/`milestone` (handler packet `milestone`) and `news`/`weather`; publishes on `shout`. */
class Lobby {
  async milestone(payload: unknown, ctx: ZLinkObjectContext): Promise<void> {
    seen.push({ spot: ctx.id, packet: ctx.packet, payload, multicast: ctx.multicast });
    await gate?.promise;
  }
  weather(payload: unknown, ctx: ZLinkObjectContext): void {
    seen.push({ spot: ctx.id, packet: ctx.packet, payload, multicast: ctx.multicast });
  }
  async shout(payload: { text: string }, ctx: ZLinkObjectContext): Promise<string> {
    await ctx.publish('news', 'milestone', { text: payload.text }).async();
    return 'sent';
  }
}

function lobbyClass(): ObjectClassDescription {
  const base = objectClass('spot', 'lobby', Lobby, {
    milestone: [{ method: 'milestone', kind: 'send' }],
    weather: [{ method: 'weather', kind: 'send' }],
    shout: [{ method: 'shout' }],
  });
  return {
    ...base,
    subscriptions: [
      { channel: 'news', topic: 'milestone', method: 'milestone', source: 'Lobby.milestone' },
      { channel: 'news', topic: 'weather', method: 'weather', source: 'Lobby.weather' },
    ],
  };
}

const runtimes: ZLinkRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  seen.length = 0;
  gate = undefined;
});

async function cluster(extra: Record<string, unknown> = {}): Promise<{
  server: ZLinkRuntime;
  client: ZLinkRuntime;
}> {
  const store = new MemoryLocationStore();
  const options = (role: 'server' | 'client', rid: string) => {
    const o = objectMeshOptions(store, role, rid);
    const mesh = (o.meshes as Record<string, Record<string, unknown>>).objects as Record<string, unknown>;
    mesh.objects = extra;
    return o;
  };
  const server = await startRuntime(options('server', 'server-a'), registry(lobbyClass()));
  runtimes.push(server);
  const client = await startRuntime(options('client', 'client-a'));
  runtimes.push(client);
  await client.waitForPeers('objects', 1);
  await server.waitForPeers('objects', 1);
  return { server, client };
}

const topicMetrics = (r: ZLinkRuntime, topic: string): MulticastMetricsSnapshot | undefined =>
  r.events.metrics.snapshot(new Map()).multicast.find((m) => m.topic === topic);

describe('Logical Multicast', () => {
  it('a subscribed handler gets the event with its channel, topic, packet and publisher; the default topic is the packet', async () => {
    const { server, client } = await cluster();
    await client.objects.createSpot('lobby', 'l1');
    await client.objects.createSpot('lobby', 'l2');
    await client.spotPublisher.publish('news', 'milestone', { n: 1 }).async();
    await client.spotPublisher.publish('news', 'rain', { mm: 3 }, { topic: 'weather' }).async();
    // From inside a Spot: it gets its own event too, after the turn that published it.
    expect(await client.routeClient.toSpot('l1').request('shout', { text: 'hi' }).async()).toBe('sent');
    await waitFor(() => seen.length === 6, 5000, 'six deliveries');
    const of = (spot: string) => seen.filter((s) => s.spot === spot);
    for (const spot of ['l1', 'l2']) {
      expect(of(spot)).toEqual([
        {
          spot,
          packet: 'milestone',
          payload: { n: 1 },
          multicast: { channel: 'news', topic: 'milestone', publisherRid: 'client-a', from: undefined },
        },
        {
          spot,
          packet: 'rain',
          payload: { mm: 3 },
          multicast: { channel: 'news', topic: 'weather', publisherRid: 'client-a', from: undefined },
        },
        {
          spot,
          packet: 'milestone',
          payload: { text: 'hi' },
          multicast: {
            channel: 'news',
            topic: 'milestone',
            publisherRid: 'server-a',
            from: { kind: 'spot', id: 'l1' },
          },
        },
      ]);
    }
    // One record per publish from the client (one subscribing node); the Spot's own publish needs none.
    expect(topicMetrics(client, 'milestone')).toMatchObject({ published: 1, records: 1 });
    expect(topicMetrics(server, 'milestone')).toMatchObject({
      published: 1,
      records: 0,
      received: 1,
      delivered: 4,
      handled: 4,
    });
  });

  it('bad arguments are InvalidArgument: at once for the names, at .async() for the event', async () => {
    const { client } = await cluster({ multicastMaxEventBytes: 64 });
    const publisher = client.spotPublisher;
    for (const [call, argument] of [
      [() => publisher.publish('', 'milestone', 1), 'channel'],
      [() => publisher.publish('news', '', 1), 'packet'],
      [() => publisher.publish('news', 'm', 1, { topic: 'zlink:flush' }), 'topic'],
      [() => publisher.publish('news', 'm', 1, { topic: '\u0001ZLF1' }), 'topic'],
      [() => publisher.publish('news', 'zlink:x', 1), 'topic'],
    ] as const)
      expect(call).toThrow(expect.objectContaining({ code: 'InvalidArgument', details: { argument } }));
    await expect(publisher.publish('news', 'milestone', 'x'.repeat(100)).async()).rejects.toMatchObject({
      code: 'InvalidArgument',
      message: expect.stringContaining('multicastMaxEventBytes 64'),
    });
    await expect(publisher.publish('news', 'milestone', { n: 10n ** 30n }).async()).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
    expect(topicMetrics(client, 'milestone')?.published ?? 0).toBe(0);
  });

  it('a Spot whose queue is full refuses the event, counted per code with an event naming the Spot', async () => {
    const { server, client } = await cluster({ objectQueueLimit: 2 });
    await client.objects.createSpot('lobby', 'busy');
    const refusals: ZLinkEvent[] = [];
    server.events.subscribe((e) => e.type === 'multicast' && refusals.push(e), { perMessage: false });
    gate = new Gate();
    await Promise.all(
      Array.from({ length: 10 }, (_, n) => client.spotPublisher.publish('news', 'milestone', { n }).async()),
    );
    // One runs (held at the gate), two wait in the queue, seven are refused.
    await waitFor(() => refusals.length === 7, 5000, 'seven refusals');
    expect(refusals[0]).toMatchObject({
      type: 'multicast',
      result: 'refused',
      channel: 'news',
      topic: 'milestone',
      packet: 'milestone',
      id: 'busy',
      publisherRid: 'client-a',
      code: 'Rejected',
    });
    gate.open();
    await waitFor(() => topicMetrics(server, 'milestone')?.handled === 3, 5000, 'three handled');
    expect(seen.map((s) => (s.payload as { n: number }).n)).toEqual([0, 1, 2]);
    expect(topicMetrics(server, 'milestone')).toMatchObject({
      received: 10,
      delivered: 10,
      handled: 3,
      refused: { Rejected: 7 },
    });
    expect(server.events.count('multicast:refused')).toBe(7);
  });

  it('the last subscribed Spot gone, the node stops advertising and gets no more records', async () => {
    const { server, client } = await cluster();
    const serverAt = (r: ZLinkRuntime) => r.snapshot().meshes[0]?.peers.find((p) => p.rid === 'server-a');
    const ref = await client.objects.createSpot('lobby', 'only');
    expect(serverAt(client)?.topics).toEqual([
      { channel: 'news', topic: 'milestone' },
      { channel: 'news', topic: 'weather' },
    ]);
    await client.spotPublisher.publish('news', 'milestone', { n: 0 }).async();
    await waitFor(() => seen.length === 1, 5000, 'the first delivery');
    await client.objects.destroy(ref);
    // The withdrawal travels as the server's state; once the client applied it, nothing goes there.
    await waitFor(
      () => serverAt(client)?.topics === undefined,
      5000,
      "the server's withdrawal at the client",
    );
    await client.spotPublisher.publish('news', 'milestone', { n: 1 }).async();
    expect(topicMetrics(client, 'milestone')).toMatchObject({ published: 2, records: 1 });
    await new Promise((r) => setTimeout(r, 100));
    expect(topicMetrics(server, 'milestone')).toMatchObject({ received: 1, dropped: 0 });
    expect(seen).toHaveLength(1);
  });

  it('a hostile peer: malformed event records and bad advertisements are dropped and counted, a topic no Spot takes is dropped, and the node goes on', async () => {
    const { server, client } = await cluster();
    await client.objects.createSpot('lobby', 'l1');
    const endpoint = server.snapshot().meshes[0]?.endpoint as string;
    // A node whose advertisement is not pairs of names: its hello is malformed, it never becomes a peer.
    const liar = new FakePeer(fakeState('liar', { mesh: 'objects', objectRole: 'server' }));
    const badHello = encodePayload([
      ...fieldsOf(encodeMeshState(RecordKind.MeshHello, liar.state)),
      [],
      null,
      [['news']],
    ]);
    const errors = () => server.events.count('protocol_error');
    const before = errors();
    await liar.connect(endpoint, badHello);
    await waitFor(() => errors() > before, 5000, 'the malformed hello counted');
    expect(server.snapshot().meshes[0]?.peers.map((p) => p.rid)).toEqual(['client-a']);
    await liar.close();

    const peer = new FakePeer(fakeState('rogue', { mesh: 'objects', objectRole: 'server' }));
    await peer.connect(endpoint);
    peer.pingEvery(500);
    await waitFor(
      () => server.snapshot().meshes[0]?.peers.some((p) => p.rid === 'rogue') === true,
      5000,
      'the rogue peer ready',
    );
    const malformed = [
      encodePayload([WIRE_VERSION, RecordKind.SpotEvent, 'news']),
      encodePayload([
        WIRE_VERSION,
        RecordKind.SpotEvent,
        'news',
        'milestone',
        'm',
        -1,
        null,
        encodePayload(1),
      ]),
      encodePayload([WIRE_VERSION, RecordKind.SpotEvent, 'news', '', 'm', 1, null, encodePayload(1)]),
      encodePayload([
        WIRE_VERSION,
        RecordKind.SpotEvent,
        'news',
        'milestone',
        'm',
        1,
        ['robot', 'x'],
        encodePayload(1),
      ]),
      encodePayload([WIRE_VERSION, RecordKind.SpotEvent, 'news', 'milestone', 'm', 1, null, 'not bytes']),
      Buffer.from([0x98, 0x01, 0x49, 0xc1]),
    ];
    const counted = errors();
    for (const record of malformed) await peer.send(record);
    // An event on a topic no Spot here takes, then one a Spot takes (any ready peer may publish).
    await peer.send(encodeSpotEvent('news', 'nobody', 'm', 1, undefined, encodePayload({ n: 'x' })));
    await peer.send(
      encodeSpotEvent('news', 'weather', 'rain', 2, { kind: 'actor', id: 'a1' }, encodePayload(7)),
    );
    await waitFor(() => seen.length === 1, 5000, "the rogue's well-formed event");
    expect(seen[0]).toMatchObject({
      spot: 'l1',
      packet: 'rain',
      payload: 7,
      multicast: { topic: 'weather', publisherRid: 'rogue', from: { kind: 'actor', id: 'a1' } },
    });
    expect(errors()).toBe(counted + malformed.length);
    expect(topicMetrics(server, 'nobody')).toMatchObject({ received: 1, dropped: 1, delivered: 0 });
    expect(server.events.count('multicast:dropped')).toBe(1);
    await peer.close();
    // The node goes on: a publish from a real peer still lands.
    await client.spotPublisher.publish('news', 'milestone', { n: 9 }).async();
    await waitFor(() => seen.length === 2, 5000, 'a normal event after it all');
  });
});

/** The fields of an encoded record (to grow it by hand). */
function fieldsOf(record: Uint8Array): unknown[] {
  const decoded = decodePayload(record);
  if (!decoded.ok) throw new Error(decoded.reason);
  return decoded.value as unknown[];
}
