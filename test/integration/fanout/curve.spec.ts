/**
 * CURVE on fanout (issue 18): the publisher's XPUB is a CURVE server, each subscriber's SUB connects to
 * the publisher key it was given. A TCP proxy records the wire: a plain run shows the event's marker, a
 * CURVE run does not. A subscriber whose key the publisher does not know, a plain subscriber and a
 * publisher that answers under another RID than the manual entry names are refused and counted, and
 * none of them delivers an event to a handler.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { type ZLinkRuntime, zlinkKeyPair } from '../../../lib/index.js';
import { Cleanup, EventCollector, waitFor } from '../../helpers/index.js';
import { RecordingProxy } from '../../helpers/tcp-proxy.js';
import { links, startPublisher, startSubscriber, subscribed } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const MARKER = 'fanout-event-marker-2c8e11';
const keys = { publisher: zlinkKeyPair(), subscriber: zlinkKeyPair(), other: zlinkKeyPair() };
type Keys = { publicKey: string; secretKey: string };
const curve = (k: Keys, allow: string[] = []) => ({ security: { curve: { ...k, allow } } });

function port(endpoint: string): number {
  return Number(endpoint.slice(endpoint.lastIndexOf(':') + 1));
}

/** Publishes `notice` events until `received` has `n` of them (a subscription takes a moment to arrive). */
async function publishUntil(pub: ZLinkRuntime, received: unknown[], n: number): Promise<void> {
  const deadline = Date.now() + 10000;
  while (received.length < n) {
    if (Date.now() > deadline) throw new Error(`${n} event(s) not received in 10 s (got ${received.length})`);
    await pub.fanoutClient.publish('news', 'notice', { text: MARKER }).async();
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A subscriber whose events are collected from before it starts: a SUB reports only the first refusal
 * of each streak, which may come before `start()` resolves.
 */
async function watchedSubscriber(
  ...args: Parameters<typeof startSubscriber>
): Promise<[ZLinkRuntime, EventCollector]> {
  let saw: EventCollector | undefined;
  const [cleanupArg, channel, subscriber, handlers, extra] = args;
  const runtime = await startSubscriber(cleanupArg, channel, subscriber, handlers, extra, (r) => {
    saw = new EventCollector(r.events);
  });
  return [runtime, saw as EventCollector];
}

describe('CURVE on fanout', () => {
  it('the wire between publisher and subscriber carries no event in clear (a plain pair does)', async () => {
    for (const secure of [false, true]) {
      const pub = await startPublisher(
        cleanup,
        'news',
        { rid: 'news-1' },
        secure ? curve(keys.publisher, [keys.subscriber.publicKey]) : {},
      );
      const proxy = cleanup.add(await RecordingProxy.start());
      proxy.target = port(pub.snapshot().fanout[0]?.publisher?.endpoint as string);
      const received: unknown[] = [];
      const entry = secure
        ? { endpoint: proxy.endpoint, publicKey: keys.publisher.publicKey }
        : proxy.endpoint;
      const sub = await startSubscriber(
        cleanup,
        'news',
        { connect: [entry] },
        { notice: (e: unknown) => void received.push(e) },
        secure ? curve(keys.subscriber) : {},
      );
      await subscribed(sub, 'news');
      await publishUntil(pub, received, 20);
      expect(received[0]).toEqual({ text: MARKER });
      expect(proxy.saw(MARKER)).toBe(!secure);
      expect(proxy.saw('news-1')).toBe(!secure); // the beacon's publisher RID
      await cleanup.closeAll();
    }
  });

  it('refuses an unknown subscriber key, a plain subscriber and another publisher RID — counted, nothing delivered', async () => {
    const pub = await startPublisher(
      cleanup,
      'news',
      { rid: 'news-1' },
      curve(keys.publisher, [keys.subscriber.publicKey]),
    );
    const onPublisher = new EventCollector(pub.events);
    const endpoint = pub.snapshot().fanout[0]?.publisher?.endpoint as string;
    const pinned = { endpoint, publicKey: keys.publisher.publicKey };
    const delivered: string[] = [];
    const handler = (who: string) => ({ notice: () => void delivered.push(who) });

    const [stranger, strangerSaw] = await watchedSubscriber(
      cleanup,
      'news',
      { connect: [pinned] },
      handler('stranger'),
      curve(keys.other),
    );
    await onPublisher.next('security_refused', (e) => e.reason === 'unknownKey', 10000);
    await strangerSaw.next('security_refused', (e) => e.reason === 'unknownKey', 10000);

    const [plain, plainSaw] = await watchedSubscriber(
      cleanup,
      'news',
      { connect: [endpoint] },
      handler('plain'),
    );
    expect(
      await onPublisher.next('security_refused', (e) => e.reason === 'mechanismMismatch', 10000),
    ).toMatchObject({
      route: 'fanout',
      channel: 'news',
      detail: expect.stringMatching(/this publisher speaks CURVE; .* does not/),
    });
    await plainSaw.next('security_refused', (e) => e.reason === 'mechanismMismatch', 10000);

    const [expecting, expectingSaw] = await watchedSubscriber(
      cleanup,
      'news',
      { connect: [{ ...pinned, rid: 'news-2' }] },
      handler('expecting'),
      curve(keys.subscriber),
    );
    const good = await startSubscriber(
      cleanup,
      'news',
      { connect: [{ ...pinned, rid: 'news-1' }] },
      handler('good'),
      curve(keys.subscriber),
    );
    await subscribed(good, 'news');
    // The expecting subscriber hears the beacon (and refuses the RID it names) before any event goes out,
    // so every event reaches it too, and it must discard them.
    expect(
      await expectingSaw.next('security_refused', (e) => e.reason === 'ridKeyMismatch', 10000),
    ).toMatchObject({ peerRid: 'news-1' });
    await subscribed(expecting, 'news');
    await publishUntil(pub, delivered, 5);
    expect(new Set(delivered)).toEqual(new Set(['good']));
    expect(links(stranger, 'news')[0]?.rid).toBeUndefined();
    expect(links(plain, 'news')[0]?.rid).toBeUndefined();
    // It read events and discarded them (read on its own socket, maybe a moment after `good`).
    await waitFor(() => (links(expecting, 'news')[0]?.unconfirmed ?? 0) > 0, 5000, 'events discarded');
    expect(new Set(delivered)).toEqual(new Set(['good']));
  });

  it("a publisher with its own key pair is reached under that key, not the runtime's", async () => {
    const own = zlinkKeyPair();
    const pub = await startPublisher(
      cleanup,
      'news',
      { rid: 'news-1', security: { curve: own } },
      curve(keys.publisher, [keys.subscriber.publicKey]),
    );
    const endpoint = pub.snapshot().fanout[0]?.publisher?.endpoint as string;
    const received: unknown[] = [];
    const sub = await startSubscriber(
      cleanup,
      'news',
      { connect: [{ endpoint, publicKey: own.publicKey }] },
      { notice: (e: unknown) => void received.push(e) },
      curve(keys.subscriber),
    );
    await subscribed(sub, 'news');
    await publishUntil(pub, received, 1);
    const [, wrongSaw] = await watchedSubscriber(
      cleanup,
      'news',
      { connect: [{ endpoint, publicKey: keys.publisher.publicKey }] },
      { notice: () => undefined },
      curve(keys.subscriber),
    );
    await wrongSaw.next('security_refused', (e) => e.reason === 'handshakeFailed', 10000);
  });
});
