/**
 * Fanout liveness and publisher restarts (docs/protocol.md#liveness, docs/protocol.md#discovery): a silent publisher is reported, and
 * the subscription comes back when it returns — at the same endpoint by hand, or with a new
 * generation at a new endpoint found through the Location Store.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Cleanup, EventCollector, freePort, waitFor } from '../../helpers/index.js';
import { useRedis } from '../store/fixtures.js';
import { freshPrefix } from '../discovery/harness.js';
import { links, local, startPublisher, startSubscriber, subscribed } from './harness.js';

const redis = useRedis();
const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

describe('a publisher silent past the timeout is reported, and taken up again when it returns', () => {
  it('by hand: the publisher stops, is reported silent, restarts on the same endpoint with a new generation, and events flow again', async () => {
    const port = await freePort();
    const publisher = { listen: { ...local, port }, beaconIntervalMs: 100 };
    const first = await startPublisher(cleanup, 'news', publisher);
    const got: number[] = [];
    const sub = await startSubscriber(
      cleanup,
      'news',
      { connect: [`tcp://127.0.0.1:${port}`], silenceTimeoutMs: 500 },
      { notice: (p) => void got.push((p as { i: number }).i) },
    );
    const events = cleanup.add(new EventCollector(sub.events));
    await subscribed(sub, 'news');
    await first.fanoutClient.publish('news', 'notice', { i: 1 }).async();
    await waitFor(() => got.length === 1, 5000, 'the first event');

    await first.close();
    await events.next('fanout_publisher', (e) => e.state === 'silent', 5000);
    const second = await startPublisher(cleanup, 'news', publisher);
    await events.next(
      'fanout_publisher',
      (e) => e.state === 'alive' && e.generation === second.generation,
      10000,
    );
    await waitFor(() => links(sub, 'news')[0]?.generation === second.generation, 5000, 'new run confirmed');
    await second.fanoutClient.publish('news', 'notice', { i: 2 }).async();
    await waitFor(() => got.length === 2, 5000, 'the event of the new run');
    expect(got).toEqual([1, 2]);
    // A new run starts its sequence over: that is no loss.
    expect(links(sub, 'news')[0]).toMatchObject({ dropped: 0 });
  });

  it("through the store: discovery: 'auto' finds the publisher, and its restart with a new generation at a new endpoint", async () => {
    const locationStore = { redis: redis.current.url, keyPrefix: freshPrefix() };
    const first = await startPublisher(cleanup, 'news', { beaconIntervalMs: 100 }, { locationStore });
    const got: string[] = [];
    const sub = await startSubscriber(
      cleanup,
      'news',
      { discovery: 'auto', silenceTimeoutMs: 500 },
      { notice: (p) => void got.push(p as string) },
      { locationStore },
    );
    await subscribed(sub, 'news');
    expect(links(sub, 'news')[0]).toMatchObject({
      endpoint: first.endpoint('news'),
      generation: first.generation,
    });
    await first.fanoutClient.publish('news', 'notice', 'one').async();
    await waitFor(() => got.length === 1, 5000, 'the first event');

    await first.close(); // its descriptor goes with it
    const second = await startPublisher(cleanup, 'news', { beaconIntervalMs: 100 }, { locationStore });
    expect(second.endpoint('news')).not.toBe(first.endpoint('news'));
    await waitFor(
      () => links(sub, 'news').some((l) => l.generation === second.generation),
      5000,
      'the new run found and confirmed',
    );
    // The old run's link goes once it falls silent (its descriptor is gone).
    await waitFor(() => links(sub, 'news').length === 1, 5000, 'the old link gone');
    await second.fanoutClient.publish('news', 'notice', 'two').async();
    await waitFor(() => got.length === 2, 5000, 'the event of the new run');
    expect(got).toEqual(['one', 'two']);
  });
});
