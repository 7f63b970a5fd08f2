/**
 * The classic fanout part of `npm run demo`: one publisher and two subscribers as three processes on
 * `system-events`. One subscriber is deliberately slow: it loses its share at the high-water mark,
 * and counts it; the fast one gets every event as long as it gets the CPU to keep up; the publisher
 * never waits for either.
 */
import { LineChild, type Start, booting } from '../demo-child.js';

/**
 * Starts the three processes at once, so that they boot while the parts before this one run; `run()`
 * then publishes `events` in a burst and reports what each subscriber got.
 */
export function startFanout(start: Start, events = 20000): { run(): Promise<void> } {
  const script = '../system-events/events-node.js';
  const publisher = new LineChild('publisher', start(script, ['publisher']));
  const ready = booting(
    publisher.next().then(async ({ endpoint }) => {
      const fast = new LineChild('fast', start(script, ['subscriber', 'fast', endpoint, 'fast']));
      const slow = new LineChild('slow', start(script, ['subscriber', 'slow', endpoint, 'slow']));
      await Promise.all([fast.next(), slow.next()]);
      return { endpoint: endpoint as string, fast, slow };
    }),
  );
  return {
    run: async () => {
      const { endpoint, fast, slow } = await ready;
      console.log(`fanout 'system-events': one publisher at ${endpoint}, a fast and a slow subscriber`);

      const tail = 30;
      const { count } = await publisher.ask({ type: 'publish', n: events, tail });
      // Each subscriber answers once it has accounted for every event (handled or counted as dropped);
      // on a busy machine the fast one may still be working through its buffer when publishing ends.
      const report = { type: 'report', until: count, withinMs: 10_000 };
      const [f, s] = await Promise.all([fast.ask(report), slow.ask(report)]);
      console.log(`published ${count} events (${events} in a burst of about 1 s, then ${tail} spaced out)`);
      console.log(`fast subscriber: delivered ${f.handled} of ${count}, dropped ${f.dropped}`);
      console.log(
        `slow subscriber: delivered ${s.handled}, dropped ${s.dropped} (its share, while it paused)`,
      );
    },
  };
}
