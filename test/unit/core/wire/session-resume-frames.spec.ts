import { describe, expect, it } from '@jest/globals';
import { Packr } from 'msgpackr';
import {
  SessionCloseCode,
  SessionFrameKind,
  closeReasonOf,
  readClientFrame,
  welcomeFrame,
} from '../../../../lib/core/index.js';

/**
 * The frames of resume after a drop (docs/sessions-wire.md#resume-after-a-drop): the Hello's `resume`
 * item, the Welcome's trailing items and Ack, read and written as a plain msgpack library does; a
 * Hello without `resume` and a Welcome without resume items are the version 1 frames, byte for byte.
 */

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });
const body = (items: unknown[]): Uint8Array => new Uint8Array(packr.pack(items));
const limits = { heartbeatMs: 10000, maxFrameBytes: 65536, maxInFlight: 64 };

describe('session frames of resume', () => {
  it("reads a Hello without resume as today's (resume undefined), and a fourth item not an array too", () => {
    expect(readClientFrame(body([1, 1, 't1']))).toEqual({
      kind: SessionFrameKind.Hello,
      version: 1,
      token: 't1',
      resume: undefined,
    });
    for (const later of [null, 'later', 7, { a: 1 }])
      expect(readClientFrame(body([1, 1, 't1', later]))).toMatchObject({ kind: 1, resume: undefined });
  });

  it('reads `[]` as a new resumable session and `[id, token, received]` as a resume', () => {
    expect(readClientFrame(body([1, 1, 't1', []]))).toMatchObject({ resume: { kind: 'new' } });
    expect(readClientFrame(body([1, 1, null, ['s.1', 'secret', 7]]))).toEqual({
      kind: SessionFrameKind.Hello,
      version: 1,
      token: undefined,
      resume: { kind: 'resume', sessionId: 's.1', token: 'secret', received: 7 },
    });
  });

  it.each([
    ['a short array', ['s.1', 'secret']],
    ['a negative count', ['s.1', 'secret', -1]],
    ['a fractional count', ['s.1', 'secret', 1.5]],
    ['a token of bytes', ['s.1', new Uint8Array([1]), 0]],
  ])('refuses a resume array that is %s', (_what, resume) => {
    expect(readClientFrame(body([1, 1, 't', resume]))).toEqual(
      "a hello's resume must be [] or [sessionId, resumeToken, received]",
    );
  });

  it('reads Ack [11, received] and refuses one without a count', () => {
    expect(readClientFrame(body([11, 0]))).toEqual({ kind: SessionFrameKind.Ack, received: 0 });
    expect(readClientFrame(body([11, 2 ** 40]))).toEqual({ kind: SessionFrameKind.Ack, received: 2 ** 40 });
    for (const bad of [[11], [11, -1], [11, 'x'], [11, 0.5]])
      expect(readClientFrame(body(bad))).toMatch(/^an ack needs the count/);
  });

  it('writes the version 1 Welcome without resume, and appends token, grace and received with it', () => {
    const plain = welcomeFrame('s.1', limits);
    expect(packr.unpack(plain.subarray(4))).toEqual([2, 1, 's.1', 10000, 65536, 64]);
    expect(plain.readUInt32BE(0)).toBe(plain.length - 4);
    const resumable = welcomeFrame('s.1', limits, { token: 'tok', graceMs: 30000, received: 3 });
    expect(packr.unpack(resumable.subarray(4))).toEqual([2, 1, 's.1', 10000, 65536, 64, 'tok', 30000, 3]);
  });

  it('names the two close codes of resume', () => {
    expect(SessionCloseCode.resumeExpired).toBe(1013);
    expect(SessionCloseCode.resumeRefused).toBe(1014);
    expect(closeReasonOf(1013)).toBe('resumeExpired');
    expect(closeReasonOf(1014)).toBe('resumeRefused');
  });
});
