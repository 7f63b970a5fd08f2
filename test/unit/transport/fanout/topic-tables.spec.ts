import { Buffer } from 'node:buffer';
import { describe, expect, it } from '@jest/globals';
import {
  MAX_TOPICS,
  SubscribedTopics,
  TopicSequences,
} from '../../../../lib/transport/fanout/topic-tables.js';

/** The fanout topic tables: a publisher's sequence per topic, a subscriber's exact match and gap count. */

describe('TopicSequences (publisher)', () => {
  it('numbers each topic on its own, from 1', () => {
    const seqs = new TopicSequences();
    expect([seqs.next('a'), seqs.next('a'), seqs.next('b'), seqs.next('a'), seqs.next('b')]).toEqual([
      1, 2, 1, 3, 2,
    ]);
  });

  it('a new topic past the bound starts every count over; a known topic does not', () => {
    const seqs = new TopicSequences(2);
    seqs.next('a');
    seqs.next('a');
    seqs.next('b');
    expect(seqs.next('a')).toBe(3); // known: no reset at the bound
    expect(seqs.size).toBe(2);
    expect(seqs.next('c')).toBe(1); // the third topic clears the table
    expect(seqs.size).toBe(1);
    expect(seqs.next('a')).toBe(1); // a step back, which subscribers take as a new run
  });

  it('is bounded by MAX_TOPICS by default', () => {
    const seqs = new TopicSequences();
    for (let i = 0; i < MAX_TOPICS; i++) seqs.next(`t${i}`);
    expect(seqs.size).toBe(MAX_TOPICS);
    seqs.next('one more');
    expect(seqs.size).toBe(1);
  });
});

describe('SubscribedTopics (subscriber)', () => {
  const topics = () =>
    new SubscribedTopics([
      { bytes: Buffer.from('scores'), form: 'scores' as string | Buffer },
      { bytes: Buffer.from([0x01, 0xff]), form: Buffer.from([0x01, 0xff]) as string | Buffer },
    ]);

  it('gives the form a topic was subscribed in, for an exact match only', () => {
    const t = topics();
    expect(t.formOf(Buffer.from('scores'))).toBe('scores');
    expect(t.formOf(Buffer.from([0x01, 0xff]))).toEqual(Buffer.from([0x01, 0xff]));
    // zeromq delivers by prefix: these share a subscribed prefix but are not ours.
    expect(t.formOf(Buffer.from('scores-eu'))).toBeUndefined();
    expect(t.formOf(Buffer.from([0x01, 0xff, 0x00]))).toBeUndefined();
    expect(t.formOf(Buffer.from('score'))).toBeUndefined();
  });

  it("keys the last topic looked at, and keeps it even when the caller's buffer is reused", () => {
    const t = topics();
    const frame = Buffer.from('scores');
    expect(t.formOf(frame)).toBe('scores');
    expect(t.key).toBe('scores');
    frame.write('xxxxxx'); // zeromq may hand the next frame in the same memory
    expect(t.formOf(frame)).toBeUndefined();
    expect(t.key).toBe('xxxxxx');
    expect(t.formOf(Buffer.from('scores'))).toBe('scores');
  });

  it('counts the events a gap in a topic lost, per topic', () => {
    const t = topics();
    expect(t.gap('a', 1)).toBe(0); // a first event: nothing known before it
    expect(t.gap('a', 2)).toBe(0);
    expect(t.gap('a', 5)).toBe(2);
    expect(t.gap('b', 7)).toBe(0); // another topic counts alone
    expect(t.gap('b', 8)).toBe(0);
    expect(t.gap('a', 6)).toBe(0);
  });

  it('a step back is a new count, not a loss; so is a repeat', () => {
    const t = topics();
    t.gap('a', 10);
    expect(t.gap('a', 1)).toBe(0);
    expect(t.gap('a', 3)).toBe(1);
    expect(t.gap('a', 3)).toBe(0);
  });

  it('a new publisher run forgets every count: no gap spans two runs', () => {
    const t = topics();
    t.gap('a', 1);
    t.newRun();
    expect(t.gap('a', 50)).toBe(0);
    expect(t.gap('a', 52)).toBe(1);
  });
});
