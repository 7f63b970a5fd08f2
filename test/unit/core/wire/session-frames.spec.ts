import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import {
  FrameSplitter,
  MAX_CONTROL_FRAME_BYTES,
  SessionCloseCode,
  SessionFrameKind,
  closeReasonOf,
  frame,
  pushFrame,
  readClientFrame,
  replyFrame,
} from '../../../../lib/core/index.js';

/**
 * The end-user session wire (docs/sessions-wire.md) as this package reads and writes it: a frame is a
 * 4-byte big-endian length and a msgpack array body, split back from chunks of any size; the hot frames
 * are read by hand and must agree with what a plain msgpack library writes.
 */

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });
const body = (items: unknown[]): Uint8Array => new Uint8Array(packr.pack(items));

function split(max: number, chunks: Uint8Array[]): { bodies: Uint8Array[]; fault: string | undefined } {
  const s = new FrameSplitter(max);
  const bodies: Uint8Array[] = [];
  let fault: string | undefined;
  for (const c of chunks) {
    fault = s.push(c, (b) => {
      bodies.push(new Uint8Array(b));
      return true;
    });
    if (fault) break;
  }
  return { bodies, fault };
}

describe('session framing', () => {
  it('gives back every body whatever the chunk boundaries (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 50 }),
        (bodies, cuts) => {
          const stream = Buffer.concat(bodies.map((b) => frame(b)));
          const chunks: Uint8Array[] = [];
          let at = 0;
          for (let i = 0; at < stream.length; i++) {
            const n = cuts[i % cuts.length] as number;
            chunks.push(stream.subarray(at, at + n));
            at += n;
          }
          const out = split(1024, chunks);
          expect(out.fault).toBeUndefined();
          expect(out.bodies.map((b) => Buffer.from(b).toString('hex'))).toEqual(
            bodies.map((b) => Buffer.from(b).toString('hex')),
          );
        },
      ),
    );
  });

  it('stops at a frame over the limit and at an empty frame, delivering what came before', () => {
    const ok = frame(new Uint8Array([1, 2, 3]));
    const over = Buffer.alloc(4);
    over.writeUInt32BE(1025, 0);
    expect(split(1024, [Buffer.concat([ok, over, ok])])).toEqual({
      bodies: [new Uint8Array([1, 2, 3])],
      fault: 'frameTooLarge',
    });
    expect(split(1024, [Buffer.concat([ok, Buffer.alloc(4), ok])]).fault).toBe('emptyFrame');
  });

  it('holds only the bytes a slow sender sent, not the length it announced', () => {
    const s = new FrameSplitter(16 * 1024 * 1024);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(16 * 1024 * 1024, 0);
    s.push(Buffer.concat([head, Buffer.alloc(10)]), () => true);
    expect(s.buffered).toBe(10);
  });
});

describe('session frames', () => {
  it('reads requests and sends as a msgpack library writes them, the payload as its bytes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 0xffffffff }),
        fc.string({ minLength: 1, maxLength: 300 }),
        fc.jsonValue(),
        (correlation, packet, payload) => {
          const r = readClientFrame(body([3, correlation, packet, payload]));
          expect(r).toMatchObject({ kind: SessionFrameKind.Request, correlation, packet });
          const bytes = (r as { payload: Uint8Array }).payload;
          expect(Buffer.from(bytes).equals(packr.pack(payload))).toBe(true);
          const s = readClientFrame(body([6, packet, payload]));
          expect(s).toMatchObject({ kind: SessionFrameKind.Send, packet });
        },
      ),
    );
  });

  it('ignores items a later version appends', () => {
    expect(readClientFrame(body([6, 'move', { x: 1 }, 'later', 7]))).toMatchObject({ packet: 'move' });
    expect(readClientFrame(body([1, 1, 'token', 'later']))).toEqual({ kind: 1, version: 1, token: 'token' });
  });

  it('refuses what it cannot read, with a reason, and never throws (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), (bytes) => {
        const r = readClientFrame(bytes);
        expect(typeof r === 'string' || typeof r === 'object').toBe(true);
      }),
    );
    expect(readClientFrame(body([3, 0, 'p', 1]))).toMatch(/correlation/);
    expect(readClientFrame(body([3, 1, '', 1]))).toMatch(/packet/);
    expect(readClientFrame(body([3, 1, 5, 1]))).toMatch(/packet/);
    expect(readClientFrame(body([99]))).toMatch(/unknown frame kind 99/);
    expect(readClientFrame(new Uint8Array([0x93, 3, 1]))).toMatch(/needs 4 items/);
    expect(readClientFrame(body([3, 1, 'p']).subarray(0, 3))).toMatch(/needs 4|packet/);
    expect(readClientFrame(body([1, 1, 'x'.repeat(MAX_CONTROL_FRAME_BYTES)]))).toMatch(/at most/);
  });

  it('writes replies and pushes a msgpack library reads back', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 0xffffffff }),
        fc.string({ minLength: 1 }),
        fc.jsonValue(),
        (c, p, v) => {
          const payload = packr.pack(v);
          const reply = replyFrame(c, payload);
          expect(reply.readUInt32BE(0)).toBe(reply.length - 4);
          expect(packr.unpack(reply.subarray(4))).toEqual([4, c, packr.unpack(payload)]);
          expect(packr.unpack(pushFrame(p, payload).subarray(4))).toEqual([7, p, packr.unpack(payload)]);
        },
      ),
    );
  });

  it('agrees byte for byte with the examples of docs/sessions-wire.md', () => {
    const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
    expect(hex(frame(body([1, 1, 't1'])))).toBe('00000006930101a27431');
    // The page writes the map {a: 1} as a fixmap, as most msgpack libraries do (msgpackr picks map 16).
    const request = Buffer.from('0000000c940301a46563686f81a16101', 'hex');
    const read = readClientFrame(request.subarray(4)) as { payload: Uint8Array };
    expect(read).toMatchObject({ kind: 3, correlation: 1, packet: 'echo' });
    expect(hex(read.payload)).toBe('81a16101');
    expect(packr.unpack(read.payload)).toEqual({ a: 1 });
    expect(hex(replyFrame(1, read.payload))).toBe('00000007930401' + '81a16101');
  });

  it('names every close code', () => {
    for (const [reason, code] of Object.entries(SessionCloseCode)) expect(closeReasonOf(code)).toBe(reason);
    expect(closeReasonOf(4000)).toBeUndefined();
  });
});
