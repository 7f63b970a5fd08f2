import { Buffer } from 'node:buffer';

/** Topics a publisher remembers with their sequence counters; past this, counting starts over for all. */
export const MAX_TOPICS = 65536;

/**
 * A publisher's sequence number per topic, so that subscribers can count what was dropped on the
 * way. The table is bounded: a new topic past `maxTopics` starts every count over, which a
 * subscriber takes as a step back (a new run), never as a gap.
 */
export class TopicSequences {
  private readonly seqs = new Map<string, number>();

  constructor(private readonly maxTopics = MAX_TOPICS) {}

  /** The sequence number of the next event on the topic named `key`: 1 for its first. */
  next(key: string): number {
    let seq = this.seqs.get(key);
    if (seq === undefined && this.seqs.size >= this.maxTopics) this.seqs.clear();
    seq = (seq ?? 0) + 1;
    this.seqs.set(key, seq);
    return seq;
  }

  /** How many topics the table holds now. */
  get size(): number {
    return this.seqs.size;
  }
}

/**
 * A subscriber's table of its topics: which subscribed topic a received one is, and the gaps in each
 * topic's sequence. zeromq matches subscriptions by prefix, so a received topic that only starts
 * with a subscribed one is not ours.
 */
export class SubscribedTopics<F> {
  private readonly forms = new Map<string, F>();
  private readonly seqs = new Map<string, number>();
  private lastTopic: Buffer = Buffer.alloc(0);
  private lastKey = '';

  constructor(topics: readonly { readonly bytes: Buffer; readonly form: F }[]) {
    for (const t of topics) this.forms.set(t.bytes.toString('latin1'), t.form);
  }

  /**
   * The form a subscribed topic was given in when `topic` is exactly that topic, else `undefined`.
   * The last topic looked at is remembered (a frame's topic often repeats): see `key`.
   */
  formOf(topic: Buffer): F | undefined {
    if (!topic.equals(this.lastTopic)) {
      this.lastTopic = Buffer.from(topic);
      this.lastKey = topic.toString('latin1');
    }
    return this.forms.get(this.lastKey);
  }

  /** The table's key of the topic `formOf` looked at last. */
  get key(): string {
    return this.lastKey;
  }

  /**
   * Records event `seq` on the topic named `key`; returns how many events the gap before it lost:
   * 0 for the next number, for a topic's first event, and for a step back (the publisher started over).
   */
  gap(key: string, seq: number): number {
    const last = this.seqs.get(key);
    this.seqs.set(key, seq);
    return last !== undefined && seq > last + 1 ? seq - last - 1 : 0;
  }

  /** Another publisher run: its sequence numbers start over, and no gap spans the two runs. */
  newRun(): void {
    this.seqs.clear();
  }
}
