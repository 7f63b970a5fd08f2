/**
 * Hostile input for the session fuzz (sessions.spec.ts), for every listener kind: frame bodies that
 * must be answered or dropped without closing the connection, and faults that must close it, each
 * with the reason the gateway counts. On `tcp` and `tls` (inside TLS) bodies are length-prefixed
 * (docs/sessions-wire.md#framing); on `websocket` each is one binary message, and the stream mixes in
 * what a WebSocket may legally carry (fragments, control frames between them, longer length forms)
 * and what it may not (reserved opcodes, unmasked or wrongly masked frames, RSV bits, stray
 * continuations, fragmented or oversized control frames, lengths past any limit, bad close codes).
 */
import { Packr } from 'msgpackr';
import { type SessionKind, carried } from '../integration/sessions/hostile-peers.js';
import { frameOf } from '../integration/sessions/harness.js';
import { Opcode, wsFrame } from '../integration/sessions/ws-peers.js';
import type { Rng } from './generator.js';

export const MAX_FRAME = 4096;
export const MAX_IN_FLIGHT = 32;
/**
 * WebSocket pings a connection may have unanswered at once before `ws` ends it (its
 * `maxPendingAutoPongs`, 60): a burst stays well under it.
 */
const MAX_WS_PINGS = 16;

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });
const body = (items: unknown[]): Buffer => packr.pack(items);

/** A frame body that must not close the connection (after the Hello). */
export function benignBody(rng: Rng): Buffer {
  const correlation = 1 + rng.int(0xfffffffe);
  switch (rng.int(8)) {
    case 0:
      return body([3, correlation, `p${rng.int(1000)}`, rng.int(100)]); // NoHandler
    case 1:
      return body([6, rng.pick(['note', 'x', 'é€']), { deep: [[[[rng.int(9)]]]] }]);
    case 2:
      return body([8]);
    case 3:
      return body([9]);
    case 4:
      // `echo` with a payload that does not decode (a reserved msgpack byte): DecodeError.
      return Buffer.concat([
        Buffer.from([0x94, 3]),
        packr.pack(correlation),
        packr.pack('echo'),
        Buffer.from([0xc1]),
      ]);
    case 5:
      return body([3, correlation, 'echo', rng.bytes(rng.int(64))]);
    case 6:
      return body([6, 'note', 'x'.repeat(rng.int(MAX_FRAME - 64))]);
    default:
      return body([3, correlation, 'echo', [1, 'a', null, true, { k: rng.int(5) }]]);
  }
}

/** A WebSocket control frame a client may send at any point: a ping (answered by `ws`) or a pong. */
function control(rng: Rng): Buffer {
  return wsFrame(rng.chance(0.5) ? Opcode.ping : Opcode.pong, rng.bytes(rng.int(126)));
}

/**
 * One body as a WebSocket client may legally send it: one frame (in any length form), or fragments
 * (some empty) with control frames between them. `pings` counts the pings it holds.
 */
function wsMessage(rng: Rng, payload: Buffer, pings: { n: number }): Buffer {
  const roll = rng.int(4);
  if (roll === 0) {
    const form = rng.pick([16, 64] as const);
    return wsFrame(Opcode.binary, payload, { lengthForm: form });
  }
  if (roll !== 1) return wsFrame(Opcode.binary, payload);
  const parts: Buffer[] = [];
  const cuts = 1 + rng.int(5);
  let at = 0;
  for (let i = 0; i <= cuts; i++) {
    const end = i === cuts ? payload.length : at + rng.int(payload.length - at + 1);
    const opcode = i === 0 ? Opcode.binary : Opcode.continuation;
    parts.push(wsFrame(opcode, payload.subarray(at, end), { fin: i === cuts }));
    at = end;
    if (i < cuts && pings.n < MAX_WS_PINGS && rng.chance(0.3)) {
      pings.n++;
      parts.push(control(rng));
    }
  }
  return Buffer.concat(parts);
}

/** `count` benign bodies as `kind` carries them, one byte stream (the caller cuts it anywhere). */
export function benignStream(rng: Rng, kind: SessionKind, count: number): Buffer {
  const chunks: Buffer[] = [];
  const pings = { n: 0 };
  for (let i = 0; i < count; i++) {
    const payload = benignBody(rng);
    if (kind !== 'websocket') chunks.push(frameOf(payload));
    else {
      chunks.push(wsMessage(rng, payload, pings));
      if (pings.n < MAX_WS_PINGS && rng.chance(0.05)) {
        pings.n++;
        chunks.push(control(rng));
      }
    }
  }
  return Buffer.concat(chunks);
}

/** What ends a connection: bytes to write, or an act on the socket; and the reason the gateway counts. */
export interface Fault {
  readonly bytes?: Buffer;
  /** `tlsGarbage`: bytes that are no TLS record, written on the TCP connection under TLS. */
  readonly act?: 'halfClose' | 'reset' | 'tlsGarbage';
  /** `undefined` for an end the client chose (counted `normal`, not checked). */
  readonly reason: string | undefined;
}

/** A fault of the session wire, whatever carries it. */
function wireFault(rng: Rng, kind: SessionKind): Fault {
  switch (rng.int(10)) {
    case 0: {
      const length = MAX_FRAME + 1 + rng.int(1 << 30);
      if (kind !== 'websocket') {
        const head = Buffer.alloc(4);
        head.writeUInt32BE(length, 0);
        return { bytes: head, reason: 'frameTooLarge' };
      }
      // `ws` reads the header and goes no further; or fragments whose sum is over the limit.
      if (rng.chance(0.5))
        return {
          bytes: wsFrame(Opcode.binary, Buffer.alloc(0), { declared: length }),
          reason: 'frameTooLarge',
        };
      const half = Buffer.alloc(MAX_FRAME / 2 + 1, 0x61);
      return {
        bytes: Buffer.concat([
          wsFrame(Opcode.binary, half, { fin: false }),
          wsFrame(Opcode.continuation, half, { fin: false }),
        ]),
        reason: 'frameTooLarge',
      };
    }
    case 1:
      return {
        bytes: kind === 'websocket' ? wsFrame(Opcode.binary, Buffer.alloc(0)) : Buffer.alloc(4),
        reason: 'protocolError',
      };
    case 2:
      return {
        bytes: carried(kind, Buffer.from([0xc1, ...rng.bytes(rng.int(16))])),
        reason: 'protocolError',
      };
    case 3:
      return { bytes: carried(kind, body([11 + rng.int(200)])), reason: 'protocolError' };
    case 4:
      return { bytes: carried(kind, body([1, 1])), reason: 'protocolError' }; // a second Hello
    case 5:
      return {
        bytes: carried(kind, Buffer.from([0x9f, 0xc1, ...rng.bytes(rng.int(16))])),
        reason: 'protocolError',
      };
    case 6: {
      // Requests that never get answered in time: one past the limit.
      const many = Array.from({ length: MAX_IN_FLIGHT + 1 }, (_, i) =>
        carried(kind, body([3, i + 1, 'hold', null])),
      );
      return { bytes: Buffer.concat(many), reason: 'tooManyInFlight' };
    }
    case 7:
      return { act: 'halfClose', reason: undefined };
    case 8:
      return { act: 'reset', reason: undefined };
    default:
      return { bytes: carried(kind, body([3, 0, 'echo', null])), reason: 'protocolError' };
  }
}

/** A frame masked with another key than its header's: the body the listener unmasks starts with 0xc1 (no msgpack). */
function badlyMasked(rng: Rng): Buffer {
  const frame = wsFrame(Opcode.binary, benignBody(rng));
  // A body under 126 bytes has its key at 2, else at 4 (benign bodies stay under 64 KiB).
  const keyAt = ((frame[1] as number) & 0x7f) < 126 ? 2 : 4;
  const masked0 = frame[keyAt + 4] as number;
  frame[keyAt] = masked0 ^ 0xc1;
  for (let i = 1; i < 4; i++) frame[keyAt + i] = rng.next() & 0xff;
  return frame;
}

/** A fault of the WebSocket itself, under the session wire. */
function webSocketFault(rng: Rng): Fault {
  const payload = benignBody(rng);
  const bytes = ((): Buffer | undefined => {
    switch (rng.int(12)) {
      case 0:
        return wsFrame(Opcode.text, Buffer.from('{"hi":1}')); // 1003
      case 1:
        return wsFrame(rng.pick([3, 4, 5, 6, 7, 11, 12, 13, 14, 15]), payload); // reserved opcodes
      case 2:
        return wsFrame(Opcode.binary, payload, { mask: false });
      case 3:
        return wsFrame(Opcode.binary, payload, { rsv: rng.pick([0x40, 0x20, 0x10, 0x70]) });
      case 4:
        return wsFrame(Opcode.continuation, payload); // no message to continue
      case 5:
        return wsFrame(Opcode.ping, Buffer.from('x'), { fin: false }); // fragmented control frame
      case 6:
        return wsFrame(Opcode.ping, rng.bytes(126 + rng.int(100))); // control frame over 125 bytes
      case 7:
        // A new message while one is still in fragments.
        return Buffer.concat([
          wsFrame(Opcode.binary, payload, { fin: false }),
          wsFrame(Opcode.binary, payload),
        ]);
      case 8:
        // A length at or past 2^53: no JavaScript number holds it exactly.
        return wsFrame(Opcode.binary, Buffer.alloc(0), { declared: 2 ** 53 + rng.int(1 << 20) * 2 ** 33 });
      case 9: {
        const code = Buffer.alloc(2);
        code.writeUInt16BE(rng.pick([0, 999, 1004, 1005, 1006, 1015, 2999, 5000]), 0);
        return wsFrame(Opcode.close, code);
      }
      case 10:
        // More fragments than one message may have.
        return Buffer.concat([
          wsFrame(Opcode.binary, Buffer.from([0x94]), { fin: false }),
          ...Array.from({ length: 260 }, () => wsFrame(Opcode.continuation, Buffer.alloc(1), { fin: false })),
        ]);
      default:
        return badlyMasked(rng);
    }
  })();
  return { bytes, reason: 'protocolError' };
}

/**
 * A fault that must close the connection, one of the session wire's on any kind; on `websocket` also
 * the WebSocket's own (and a client's Close frame, an end it chose); on `tls` also bytes under TLS
 * that are no TLS record (a whole record header, whose first byte is no record type).
 */
export function fatal(rng: Rng, kind: SessionKind): Fault {
  if (kind === 'websocket') {
    if (rng.chance(0.05)) {
      const code = Buffer.alloc(2);
      code.writeUInt16BE(1000, 0);
      return { bytes: wsFrame(Opcode.close, code), reason: undefined };
    }
    if (rng.chance(0.5)) return webSocketFault(rng);
  }
  if (kind === 'tls' && rng.chance(0.1)) {
    // A record header's 5 bytes at least: TLS reads no fewer before it judges them.
    const garbage = rng.bytes(5 + rng.int(512));
    garbage[0] = 0x30 + rng.int(0xd0);
    return { bytes: garbage, act: 'tlsGarbage', reason: 'protocolError' };
  }
  return wireFault(rng, kind);
}
