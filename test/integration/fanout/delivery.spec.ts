/**
 * Classic fanout delivery (docs/protocol.md#classic-fanout): events reach every connected subscriber by
 * exact topic, handlers are found by packet name, the reserved liveness topic is refused on publish
 * and beacons never reach a handler, and the publish call has no metadata.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ZLinkFanoutContext } from '../../../lib/core/index.js';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { Cleanup, EventCollector, outcome, waitFor } from '../../helpers/index.js';
import { links, publishMany, startPublisher, startSubscriber, subscribed } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

describe('every connected subscriber gets the events of its topics', () => {
  it('two subscribers each receive all 20 000 events; the handler sees the packet and the topic', async () => {
    const pub = await startPublisher(cleanup, 'news');
    const seen: { a: number; b: number; context?: ZLinkFanoutContext } = { a: 0, b: 0 };
    const endpoint = pub.endpoint('news') as string;
    const subA = await startSubscriber(
      cleanup,
      'news',
      { connect: [endpoint] },
      {
        headline: (_p, ctx) => {
          seen.a++;
          seen.context ??= ctx;
        },
      },
    );
    const subB = await startSubscriber(
      cleanup,
      'news',
      { connect: [endpoint] },
      { headline: () => void seen.b++ },
    );
    await subscribed(subA, 'news');
    await subscribed(subB, 'news');
    await publishMany(pub, 'news', 'headline', 20000, (i) => ({ i, text: 'x'.repeat(20) }));
    await waitFor(() => seen.a === 20000 && seen.b === 20000, 10000, 'both subscribers got everything');
    expect(seen.context).toMatchObject({ channelName: 'news', packet: 'headline', topic: 'headline' });
    expect(seen.context?.publisherRid).toBe(pub.snapshot().fanout[0]?.publisher?.rid);
    expect(links(subA, 'news')[0]).toMatchObject({ received: 20000, dropped: 0 });
  });
});

describe('the reserved liveness topic', () => {
  const reserved = Buffer.from([0x01, 0x5a, 0x4c, 0x46, 0x31]);
  const allowed: [string, Buffer][] = [
    ['4 bytes (shorter)', Buffer.from([0x01, 0x5a, 0x4c, 0x46])],
    ['6 bytes (one more)', Buffer.from([0x01, 0x5a, 0x4c, 0x46, 0x31, 0x00])],
    ['last byte different', Buffer.from([0x01, 0x5a, 0x4c, 0x46, 0x32])],
  ];

  it('exactly 01 5A 4C 46 31 is refused with InvalidArgument; a topic differing in length or any byte is published and delivered', async () => {
    const pub = await startPublisher(cleanup, 'news');
    const got: Buffer[] = [];
    const sub = await startSubscriber(
      cleanup,
      'news',
      { connect: [pub.endpoint('news') as string], topics: allowed.map(([, t]) => t) },
      { notice: (_p, ctx) => void got.push(ctx.topic as Buffer) },
    );
    await subscribed(sub, 'news');
    const refused = await outcome(
      pub.fanoutClient.publish('news', 'notice', {}, { topic: reserved }).async(),
    );
    expect(refused).toMatchObject({ ok: false, code: 'InvalidArgument' });
    // The same bytes as a string are the same topic.
    const asString = await outcome(
      pub.fanoutClient.publish('news', 'notice', {}, { topic: reserved.toString('latin1') }).async(),
    );
    expect(asString).toMatchObject({ ok: false, code: 'InvalidArgument' });
    for (const [, topic] of allowed) await pub.fanoutClient.publish('news', 'notice', {}, { topic }).async();
    await waitFor(() => got.length === 3, 5000, 'three events');
    expect(got.map((t) => t.toString('hex')).sort()).toEqual(
      allowed.map(([, t]) => t.toString('hex')).sort(),
    );
  });

  it('a beacon never reaches a handler nor a delivery event, and the publish call has no metadata setter', async () => {
    const pub = await startPublisher(cleanup, 'news', { beaconIntervalMs: 50 });
    let calls = 0;
    const sub = await startSubscriber(
      cleanup,
      'news',
      { connect: [pub.endpoint('news') as string], topics: ['a'] },
      { notice: () => void calls++ },
    );
    const events = cleanup.add(new EventCollector(sub.events));
    await subscribed(sub, 'news');
    await new Promise((r) => setTimeout(r, 500)); // ~10 beacons
    expect(calls).toBe(0);
    expect(events.of('delivery')).toEqual([]);
    expect(links(sub, 'news')[0]?.received).toBe(0);
    const call = pub.fanoutClient.publish('news', 'notice', {});
    expect('metadata' in call).toBe(false);
    // @ts-expect-error -- a fanout publish has no metadata, in the types either
    expect(() => call.metadata('k', 'v')).toThrow(TypeError);
    await call.async();
  });
});

describe('topics select receivers exactly; handlers are found by packet name', () => {
  it("a subscriber of 'a' gets neither 'ab' (a prefix match in zeromq) nor 'b'; an event without a handler is discarded and reported", async () => {
    const pub = await startPublisher(cleanup, 'news');
    const topics: string[] = [];
    const sub = await startSubscriber(
      cleanup,
      'news',
      { connect: [pub.endpoint('news') as string], topics: ['a', 'c'] },
      { notice: (_p, ctx) => void topics.push(ctx.topic as string) },
    );
    const events = cleanup.add(new EventCollector(sub.events));
    await subscribed(sub, 'news');
    for (const topic of ['a', 'ab', 'b', 'c'])
      await pub.fanoutClient.publish('news', 'notice', {}, { topic }).async();
    await pub.fanoutClient.publish('news', 'unknown.packet', {}, { topic: 'a' }).async();
    await events.next('delivery', (e) => e.result === 'no_handler' && e.packet === 'unknown.packet');
    await waitFor(() => topics.length === 2, 5000, 'the two exact matches');
    expect(topics.sort()).toEqual(['a', 'c']);
    expect(links(sub, 'news')[0]).toMatchObject({ filtered: 1 });
    const failures = events.of('delivery').filter((e) => e.route === 'fanout' && e.result !== 'ok');
    expect(failures).toHaveLength(1);
  });
});

describe('a subscriber with nothing to subscribe', () => {
  it('no topics and no @FanoutHandler fails the start with Configuration naming the field', async () => {
    const runtime = cleanup.add(
      new ZLinkRuntime({ fanout: { news: { subscriber: { connect: ['tcp://127.0.0.1:9'] } } } }),
    );
    const result = await outcome(runtime.start());
    expect(result).toMatchObject({ ok: false, code: 'Configuration' });
    expect((result as { error: Error }).error.message).toContain('fanout.news.subscriber.topics');
  });
});
