/**
 * The classic fanout part of `npm run demo`: one publisher and two subscribers as three processes on
 * `system-events`. One subscriber is deliberately slow: it loses its share at the high-water mark,
 * and counts it; the fast one gets every event; the publisher never waits for either.
 */
import { LineChild, type Start } from '../demo-child.js';

export async function fanoutDemo(start: Start, events = 20000): Promise<void> {
  const script = '../system-events/events-node.js';
  const publisher = new LineChild('publisher', start(script, ['publisher']));
  const { endpoint } = await publisher.next();
  const fast = new LineChild('fast', start(script, ['subscriber', 'fast', endpoint, 'fast']));
  const slow = new LineChild('slow', start(script, ['subscriber', 'slow', endpoint, 'slow']));
  await Promise.all([fast.next(), slow.next()]);
  console.log(`fanout 'system-events': one publisher at ${endpoint}, a fast and a slow subscriber`);

  const tail = 30;
  const { count } = await publisher.ask({ type: 'publish', n: events, tail });
  await new Promise((r) => setTimeout(r, 500));
  const [f, s] = await Promise.all([fast.ask({ type: 'report' }), slow.ask({ type: 'report' })]);
  console.log(`published ${count} events (${events} in a burst of about 1 s, then ${tail} spaced out)`);
  console.log(`fast subscriber: delivered ${f.handled} of ${count}, dropped ${f.dropped}`);
  console.log(`slow subscriber: delivered ${s.handled}, dropped ${s.dropped} (its share, while it paused)`);
}
