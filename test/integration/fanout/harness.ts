/** Building blocks of the fanout suites: runtimes with a publisher or a subscriber on 127.0.0.1. */
import type { FanoutHandlerFn, ZLinkOptions } from '../../../lib/core/index.js';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { type Cleanup, waitFor } from '../../helpers/index.js';

export const local = { bindHost: '127.0.0.1' } as const;

type FanoutEntry = NonNullable<ZLinkOptions['fanout']>[string];

/** A runtime with a publisher on `channel`. */
export async function startPublisher(
  cleanup: Cleanup,
  channel: string,
  publisher: NonNullable<FanoutEntry['publisher']> = {},
  extra: Partial<ZLinkOptions> = {},
): Promise<ZLinkRuntime> {
  const runtime = cleanup.add(
    new ZLinkRuntime({ ...extra, fanout: { [channel]: { publisher: { listen: local, ...publisher } } } }),
  );
  await runtime.start();
  return runtime;
}

/**
 * A runtime with a subscriber on `channel` and `handlers` by packet name. `beforeStart` sees the runtime
 * before it starts (to collect events from its first connection on).
 */
export async function startSubscriber(
  cleanup: Cleanup,
  channel: string,
  subscriber: NonNullable<FanoutEntry['subscriber']>,
  handlers: Record<string, FanoutHandlerFn>,
  extra: Partial<ZLinkOptions> = {},
  beforeStart: (runtime: ZLinkRuntime) => void = () => undefined,
): Promise<ZLinkRuntime> {
  const runtime = cleanup.add(new ZLinkRuntime({ ...extra, fanout: { [channel]: { subscriber } } }));
  for (const [packet, handler] of Object.entries(handlers)) {
    runtime.registerFanoutHandler({ channel, kind: 'send', packet, handler, source: `test.${packet}` });
  }
  beforeStart(runtime);
  await runtime.start();
  return runtime;
}

/** The subscriber's view of its publishers on `channel`. */
export function links(runtime: ZLinkRuntime, channel: string) {
  return runtime.snapshot().fanout.find((f) => f.channel === channel)?.subscriber?.publishers ?? [];
}

/**
 * Resolves once every publisher link of the subscriber heard a beacon: the beacon answers the
 * subscriber's last subscription, so from then on every topic of it is subscribed at the publisher.
 */
export function subscribed(runtime: ZLinkRuntime, channel: string, count = 1): Promise<void> {
  return waitFor(
    () => links(runtime, channel).filter((l) => l.rid !== undefined).length >= count,
    5000,
    `${count} publisher(s) confirmed on '${channel}'`,
  );
}

/** Publishes `n` events in bursts of `burst` (no await between publishes of one burst), yielding between bursts. */
export async function publishMany(
  runtime: ZLinkRuntime,
  channel: string,
  packet: string,
  n: number,
  event: (i: number) => unknown,
  burst = 1000,
): Promise<number> {
  const t0 = performance.now();
  for (let sent = 0; sent < n;) {
    const calls: Promise<void>[] = [];
    for (let i = 0; i < burst && sent < n; i++, sent++) {
      calls.push(runtime.fanoutClient.publish(channel, packet, event(sent)).async());
    }
    await Promise.all(calls);
    await new Promise((r) => setImmediate(r));
  }
  return performance.now() - t0;
}
