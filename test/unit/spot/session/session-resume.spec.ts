import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { SessionResume } from '../../../../lib/spot/session/session-resume.js';

/**
 * What a resumable session holds for its client (docs/sessions-wire.md#resume-after-a-drop): a token
 * used once, its frames numbered from 1 and held until acknowledged, within `maxPendingBytes`, and
 * the frames after any count the client may resume from.
 */

const reply = (correlation: number, bytes = 1) =>
  ({ kind: 'reply', correlation, payload: new Uint8Array(bytes) }) as const;
const push = (packet: string, bytes = 1) =>
  ({ kind: 'push', packet, payload: new Uint8Array(bytes) }) as const;

describe('SessionResume', () => {
  it('gives a token of 256 random bits (43 base64url characters), new at each renew', () => {
    const r = new SessionResume(1000);
    const first = r.token;
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.matches(first)).toBe(true);
    r.renew();
    expect(r.token).not.toBe(first);
    expect(r.matches(first)).toBe(false);
    expect(r.matches(r.token)).toBe(true);
    expect(new SessionResume(1000).token).not.toBe(r.token);
  });

  it('refuses a token of another length or one character off', () => {
    const r = new SessionResume(1000);
    const t = r.token;
    expect(r.matches('')).toBe(false);
    expect(r.matches(`${t}x`)).toBe(false);
    expect(r.matches(t.slice(1))).toBe(false);
    const last = t.at(-1) === 'A' ? 'B' : 'A';
    expect(r.matches(`${t.slice(0, -1)}${last}`)).toBe(false);
    expect(r.matches('é'.repeat(43))).toBe(false);
  });

  it('numbers frames from 1 and sends again those after the count a client resumes from', () => {
    const r = new SessionResume(1000);
    r.hold(reply(1), 1 << 20);
    r.hold(push('a'), 1 << 20);
    r.hold({ kind: 'error', correlation: 2, code: 'Timeout', message: 'late', details: undefined }, 1 << 20);
    expect(r.after(0).map((f) => f.seq)).toEqual([1, 2, 3]);
    expect(r.after(2).map((f) => f.kind)).toEqual(['error']);
    expect(r.after(3)).toEqual([]);
    expect([0, 1, 2, 3].map((n) => r.canResumeFrom(n))).toEqual([true, true, true, true]);
    expect(r.canResumeFrom(4)).toBe(false);
  });

  it('lets go of what an Ack covers; a count behind it can no longer resume; one ahead is refused', () => {
    const r = new SessionResume(1000);
    for (let i = 1; i <= 5; i++) r.hold(reply(i, 10), 1 << 20);
    const before = r.bytes;
    expect(r.ack(3)).toBe(true);
    expect(r.bytes).toBeLessThan(before);
    expect(r.after(0).map((f) => f.seq)).toEqual([4, 5]);
    expect(r.canResumeFrom(2)).toBe(false);
    expect(r.canResumeFrom(3)).toBe(true);
    expect(r.ack(1)).toBe(true); // an older count changes nothing
    expect(r.after(0).map((f) => f.seq)).toEqual([4, 5]);
    expect(r.ack(6)).toBe(false);
    expect(r.ack(5)).toBe(true);
    expect(r.bytes).toBe(0);
  });

  it('refuses a frame once more than maxBytes is held: at most the limit and one frame', () => {
    const r = new SessionResume(1000);
    expect(r.hold(push('big', 900), 1000)).toBe(true);
    expect(r.hold(push('more', 900), 1000)).toBe(true);
    expect(r.bytes).toBeGreaterThan(1000);
    expect(r.hold(push('one too many', 1), 1000)).toBe(false);
    expect(r.after(0)).toHaveLength(2);
    r.ack(2);
    expect(r.hold(push('after the ack', 1), 1000)).toBe(true);
  });

  it('keeps its own copy of a payload that is a view of a larger buffer', () => {
    const r = new SessionResume(1000);
    const message = new Uint8Array(4096).fill(7);
    const view = message.subarray(100, 104);
    r.hold({ kind: 'push', packet: 'p', payload: view }, 1 << 20);
    const held = r.after(0)[0] as { payload: Uint8Array };
    expect(held.payload.buffer.byteLength).toBe(4);
    message.fill(0);
    expect([...held.payload]).toEqual([7, 7, 7, 7]);
  });

  it('holds exactly the frames after every Ack, in order, whatever the Acks (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant('frame' as const), fc.nat(3000)), { maxLength: 3000 }),
        (steps) => {
          const r = new SessionResume(1000);
          let sent = 0;
          let acked = 0;
          for (const step of steps) {
            if (step === 'frame') {
              r.hold(push('p', 3), Number.MAX_SAFE_INTEGER);
              sent++;
            } else {
              expect(r.ack(step)).toBe(step <= sent);
              if (step <= sent) acked = Math.max(acked, step);
            }
          }
          const seqs = r.after(acked).map((f) => f.seq);
          expect(seqs).toEqual(Array.from({ length: sent - acked }, (_, i) => acked + i + 1));
          expect(r.bytes).toBe((sent - acked) * (64 + 3 + 1));
        },
      ),
    );
  });
});
