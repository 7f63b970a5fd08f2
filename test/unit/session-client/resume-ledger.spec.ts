import { describe, expect, it } from '@jest/globals';
import { PING_AFTER_BYTES, ResumeLedger } from '../../../lib/session-client/resume-ledger.js';

/**
 * The client's resume bookkeeping (docs/sessions-wire.md#counting-and-acks): what it keeps to send
 * again, what lets go of it (an answer, a Pong, a resumed Welcome), and the count its Acks say.
 */

const bytes = (n: number): Uint8Array => new Uint8Array(n);

describe('ResumeLedger', () => {
  it('numbers Requests and Sends from 1 and lets go of them when an answer shows the server took them', () => {
    const l = new ResumeLedger('s', 't', 30000);
    const one = l.keep(bytes(10), 1);
    l.keep(bytes(10), undefined);
    const three = l.keep(bytes(10), 2);
    expect([one.seq, three.seq]).toEqual([1, 3]);
    expect(l.keeping).toEqual({ frames: 3, bytes: 30 });
    // The answer to request 2 (number 3) says the server took frames 1..3; an older answer says less.
    l.answered(three);
    expect(l.keeping.frames).toBe(0);
    l.answered(one);
    expect(l.keeping.frames).toBe(0);
  });

  it('asks for a Ping every 16 KiB kept, and lets go of what came before it when its Pong comes', () => {
    const l = new ResumeLedger('s', 't', 30000);
    let pings = 0;
    // 1000 Sends of 100 bytes, pinging when due: what is kept never passes 16 KiB plus one round trip.
    for (let i = 0; i < 1000; i++) {
      l.keep(bytes(100), undefined);
      if (l.pingDue) {
        l.pinged();
        pings++;
      }
    }
    expect(pings).toBe(Math.floor((1000 * (100 + 64)) / PING_AFTER_BYTES));
    expect(l.keeping.frames).toBe(1000);
    for (let i = 0; i < pings; i++) l.ponged();
    // Only what was written after the last Ping stays.
    expect(l.keeping.bytes).toBeLessThan(PING_AFTER_BYTES);
    // A Pong with no Ping of this connection (they were lost with the old one) lets go of nothing.
    l.keep(bytes(100), undefined);
    l.pinged();
    l.connectionLost();
    l.ponged();
    expect(l.keeping.frames).toBe(1);
  });

  it('on a resume, sends again what the server never got, numbered on from its count, skipping requests settled here', () => {
    const l = new ResumeLedger('s', 't', 30000);
    const frames = [
      l.keep(bytes(1), 1),
      l.keep(bytes(2), 2),
      l.keep(bytes(3), undefined),
      l.keep(bytes(4), 3),
    ];
    const again = l.resumed(1, 't2', 20000, (f) => f.correlation !== 2);
    expect(again).toEqual([frames[2], frames[3]]);
    expect(again?.map((f) => f.seq)).toEqual([2, 3]);
    expect([l.token, l.graceMs]).toEqual(['t2', 20000]);
    // The next frame follows them; an answer to the renumbered request lets go of everything.
    expect(l.keep(bytes(5), 4).seq).toBe(4);
    l.answered(frames[3] as (typeof frames)[number]);
    expect(l.keeping.frames).toBe(1);
  });

  it('refuses a resume whose count is below what the server was known to have taken', () => {
    const l = new ResumeLedger('s', 't', 30000);
    l.answered(l.keep(bytes(1), 1));
    l.keep(bytes(1), 2);
    expect(l.resumed(0, 't2', 1000, () => true)).toBeUndefined();
    expect(l.resumed(1.5, 't2', 1000, () => true)).toBeUndefined();
    expect(l.resumed(1, 't2', 1000, () => true)?.length).toBe(1);
  });

  it('acknowledges only a count the server has not heard, and a resume Hello counts as heard', () => {
    const l = new ResumeLedger('s', 't', 30000, 5);
    expect(l.ackDue()).toBeUndefined();
    l.received += 2;
    expect(l.ackDue()).toBe(7);
    expect(l.ackDue()).toBeUndefined();
    l.received++;
    expect(l.resumeAsk()).toEqual(['s', 't', 8]);
    expect(l.ackDue()).toBeUndefined();
  });
});
