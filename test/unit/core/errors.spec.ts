import { describe, expect, it } from '@jest/globals';
import {
  DRAINING_CODE,
  REMOTE_CODES,
  RecordKind,
  type WireError,
  MAX_ERROR_DETAILS_BYTES,
  MAX_ERROR_MESSAGE_CHARS,
  ZLINK_ERROR_CODES,
  ZLinkError,
  configurationError,
  decodeFrame,
  encodeErrorReply,
  fromWireError,
  invalidArgument,
  isZLinkError,
  toWireError,
} from '../../../lib/core/index.js';

/** docs/errors.md#the-codes: every failure a caller sees is a ZLinkError with one of the fixed codes. */

/** Something shaped like Nest's RpcException: an Error with getError(). */
class FakeRpcException extends Error {
  constructor(private readonly payload: string | object) {
    super(typeof payload === 'string' ? payload : 'rpc exception');
  }
  getError(): string | object {
    return this.payload;
  }
}

/** What travels: toWireError → ErrorReply record → decodeFrame → fromWireError. */
function overTheWire(error: unknown): ZLinkError {
  const { records } = decodeFrame(encodeErrorReply(7, toWireError(error)));
  const record = records[0];
  if (record?.kind !== RecordKind.ErrorReply) throw new Error('expected an error reply record');
  return fromWireError(record.error, 'request billing/charge');
}

describe('ZLinkError codes', () => {
  it.each(ZLINK_ERROR_CODES.map((c) => [c]))('code %s constructs a ZLinkError', (code) => {
    const e = new ZLinkError(code, `about ${code}`);
    expect(e).toBeInstanceOf(Error);
    expect(e).toBeInstanceOf(ZLinkError);
    expect(e.name).toBe('ZLinkError');
    expect(e.code).toBe(code);
    expect(e.message).toBe(`about ${code}`);
    expect(isZLinkError(e)).toBe(true);
    expect(isZLinkError(e, code)).toBe(true);
    expect(e.remote).toBeUndefined();
    expect(e.details).toBeUndefined();
  });

  it('the code list is the one docs/errors.md fixes', () => {
    expect([...ZLINK_ERROR_CODES].sort()).toEqual(
      [
        'NotFound',
        'NotConfigured',
        'Unavailable',
        'Timeout',
        'Cancelled',
        'RouteError',
        'RemoteError',
        'ProtocolError',
        'InvalidArgument',
        'Rejected',
        'Shutdown',
        'Configuration',
        'InvalidOperation',
      ].sort(),
    );
  });

  it('keeps cause and details', () => {
    const cause = new Error('zmq EAGAIN');
    const e = new ZLinkError('Unavailable', 'x', { cause, details: { n: 1 } });
    expect(e.cause).toBe(cause);
    expect(e.details).toEqual({ n: 1 });
    expect(isZLinkError(e, 'Timeout')).toBe(false);
    expect(isZLinkError(new Error('plain'))).toBe(false);
  });

  it('configurationError and invalidArgument name the field', () => {
    const c = configurationError('clientServer.billing.server.weight', 'bad');
    expect([c.code, c.message, c.details]).toEqual([
      'Configuration',
      'clientServer.billing.server.weight: bad',
      { field: 'clientServer.billing.server.weight' },
    ]);
    const a = invalidArgument('weight', 'must be 0..10000');
    expect([a.code, a.message]).toEqual(['InvalidArgument', 'weight: must be 0..10000']);
  });
});

describe('toWireError / fromWireError', () => {
  it.each(ZLINK_ERROR_CODES.filter((c) => c !== 'RemoteError').map((c) => [c]))(
    'a handler throwing ZLinkError %s: the wire keeps the code; the caller sees RemoteError with .remote.code',
    (code) => {
      const wire = toWireError(new ZLinkError(code, 'handler said no', { details: { why: code } }));
      expect(wire).toEqual({ code, message: 'handler said no', details: { why: code } });
      const e = overTheWire(new ZLinkError(code, 'handler said no', { details: { why: code } }));
      expect(e.code).toBe('RemoteError');
      expect(e.remote).toEqual({ code, message: 'handler said no', details: { why: code } });
      expect(e.remoteCode).toBe(code);
      expect(e.details).toEqual({ why: code });
      expect(e.message).toContain(code);
      expect(e.message).toContain('request billing/charge');
    },
  );

  it("a draining server's refusal (ServerDraining) becomes ZLinkError code Rejected", () => {
    const e = fromWireError({ code: DRAINING_CODE, message: 'server is draining' }, 'request billing/charge');
    expect(e.code).toBe('Rejected');
    expect(e.remote?.code).toBe(DRAINING_CODE);
    expect(e.message).toContain('server is draining');
  });

  it.each(Object.values(REMOTE_CODES).map((c) => [c]))(
    'remote-only code %s arrives as RemoteError with .remote.code',
    (code) => {
      const e = fromWireError({ code, message: 'm' }, 'where');
      expect(e.code).toBe('RemoteError');
      expect(e.remote?.code).toBe(code);
    },
  );

  it('a plain Error becomes HandlerError with its message and no stack', () => {
    const wire = toWireError(new TypeError('cannot read amount'));
    expect(wire).toEqual({ code: REMOTE_CODES.handlerError, message: 'cannot read amount' });
  });

  it('a thrown non-Error value becomes HandlerError with its text', () => {
    expect(toWireError('just a string')).toEqual({ code: 'HandlerError', message: 'just a string' });
    expect(toWireError(42)).toEqual({ code: 'HandlerError', message: '42' });
    expect(toWireError(undefined)).toEqual({ code: 'HandlerError', message: 'undefined' });
  });

  it('an object with getError() (like RpcException) travels its payload as details', () => {
    const payload = { status: 'error', message: 'amount must be positive', field: 'amount' };
    const wire = toWireError(new FakeRpcException(payload));
    expect(wire).toEqual({ code: 'HandlerError', message: 'amount must be positive', details: payload });
    const e = overTheWire(new FakeRpcException(payload));
    expect(e.code).toBe('RemoteError');
    expect(e.remote?.code).toBe('HandlerError');
    expect(e.details).toEqual(payload);
  });

  it('a getError() string payload is the message and the details', () => {
    expect(toWireError(new FakeRpcException('forbidden'))).toEqual({
      code: 'HandlerError',
      message: 'forbidden',
      details: 'forbidden',
    });
  });

  it('a getError() payload without a message gets a generic one', () => {
    expect(toWireError({ getError: () => ({ code: 7 }) })).toEqual({
      code: 'HandlerError',
      message: 'handler error',
      details: { code: 7 },
    });
  });

  it('a relayed RemoteError keeps the original remote code, not RemoteError', () => {
    const original: WireError = { code: 'NoHandler', message: 'no handler for x', details: { packet: 'x' } };
    const relayed = fromWireError(original, 'hop 1');
    expect(toWireError(relayed)).toEqual(original);
    const e = overTheWire(relayed);
    expect([e.code, e.remote?.code]).toEqual(['RemoteError', 'NoHandler']);
  });
});

describe('toWireError bounds what a failure sends', () => {
  const packed = (value: unknown): number =>
    encodeErrorReply(1, { code: 'X', message: '', details: value }).length;

  it('keeps small details and messages as they are', () => {
    const details = { statusCode: 400, message: ['name must be a string'], error: 'Bad Request' };
    expect(toWireError(new FakeRpcException(details))).toEqual({
      code: REMOTE_CODES.handlerError,
      message: 'rpc exception',
      details,
    });
  });

  it("cuts a long message to MAX_ERROR_MESSAGE_CHARS, ending in '…'", () => {
    const wire = toWireError(new Error('x'.repeat(5000)));
    expect(wire.message).toHaveLength(MAX_ERROR_MESSAGE_CHARS);
    expect(wire.message.endsWith('…')).toBe(true);
  });

  it('keeps the leading messages of a large HTTP error body that fit, and counts the ones left out', () => {
    const message = Array.from({ length: 500 }, (_, i) => `field${i} must be a string`);
    const wire = toWireError(new FakeRpcException({ statusCode: 400, message, error: 'Bad Request' }));
    const details = wire.details as { statusCode: number; message: string[]; truncated: number };
    expect(details.statusCode).toBe(400);
    expect(details.message.length).toBeGreaterThan(50);
    expect(details.message).toEqual(message.slice(0, details.message.length));
    expect(details.truncated).toBe(500 - details.message.length);
    expect(packed(details)).toBeLessThanOrEqual(MAX_ERROR_DETAILS_BYTES + 64);
  });

  it('replaces other large details with { truncated, bytes }', () => {
    const wire = toWireError(
      new ZLinkError('InvalidArgument', 'too big', { details: { blob: 'y'.repeat(10000) } }),
    );
    expect(wire).toMatchObject({ code: 'InvalidArgument', message: 'too big', details: { truncated: true } });
    expect((wire.details as { bytes: number }).bytes).toBeGreaterThan(10000);
  });
});

describe('toWireError measures what it sends', () => {
  const packed = (value: unknown): number =>
    encodeErrorReply(1, { code: 'X', message: '', details: value }).length -
    encodeErrorReply(1, { code: 'X', message: '' }).length;
  const fifty = (i: number): string => `${i}`.padStart(50, 'v');
  const throwing = (details: unknown): WireError =>
    toWireError(new ZLinkError('InvalidArgument', 'bad input', { details }));

  it('counts a Map by its entries, a Set by its values, a class instance by what it encodes to', () => {
    class Holder {
      constructor(readonly items: string[]) {}
    }
    class Json {
      toJSON(): unknown {
        return { items: Array.from({ length: 2000 }, (_, i) => fifty(i)) };
      }
    }
    const big = Array.from({ length: 2000 }, (_, i) => fifty(i));
    const cases: Record<string, unknown> = {
      map: { m: new Map(big.map((v, i) => [`k${i}`, v])) },
      set: { s: new Set(big) },
      instance: { h: new Holder(big) },
      toJSON: { j: new Json() },
    };
    for (const [name, details] of Object.entries(cases)) {
      const wire = throwing(details);
      expect([name, wire.details]).toEqual([name, { truncated: true }]);
      expect(packed(wire.details)).toBeLessThanOrEqual(MAX_ERROR_DETAILS_BYTES);
    }
  });

  it('sends small non-plain details as the plain data msgpack gives them', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    const wire = throwing({ m: new Map([['a', 1]]), s: new Set([1, 2]), p: new Point(1, 2) });
    const { records } = decodeFrame(encodeErrorReply(1, wire));
    const record = records[0];
    if (record?.kind !== RecordKind.ErrorReply) throw new Error('expected an error reply record');
    expect(record.error.details).toEqual({ m: { a: 1 }, s: [1, 2], p: { x: 1, y: 2 } });
  });

  it('a getter counted small cannot send large: what is measured is what is sent', () => {
    let reads = 0;
    const details = {
      get blob(): string {
        return reads++ === 0 ? 'small' : 'x'.repeat(100_000);
      },
    };
    const wire = throwing(details);
    expect(packed(wire.details)).toBeLessThanOrEqual(MAX_ERROR_DETAILS_BYTES);
  });

  it('leaves out details that cannot be encoded, and the message says so', () => {
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    expect(throwing(circular)).toEqual({
      code: 'InvalidArgument',
      message: 'bad input (details could not be encoded: circular)',
    });
    expect(throwing({ s: Symbol('x') }).message).toBe('bad input (details could not be encoded: a symbol)');
    expect(throwing({ n: 2n ** 70n }).message).toBe(
      'bad input (details could not be encoded: a BigInt past 64 bits)',
    );
    const long = toWireError(new ZLinkError('InvalidArgument', 'y'.repeat(5000), { details: circular }));
    expect(long.message).toHaveLength(MAX_ERROR_MESSAGE_CHARS);
    expect(long.message.endsWith('(details could not be encoded: circular)')).toBe(true);
  });

  it('shared (not circular) values are sent as they are', () => {
    const shared = { k: 1 };
    expect(throwing({ a: shared, b: shared }).details).toEqual({ a: { k: 1 }, b: { k: 1 } });
  });

  it('cuts a long message on a code point, never between the halves of a surrogate pair', () => {
    for (const pad of [0, 1]) {
      const message = 'a'.repeat(MAX_ERROR_MESSAGE_CHARS - 2 - pad) + '😀'.repeat(100);
      const cut = toWireError(new Error(message)).message;
      expect(cut.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
      expect(cut.endsWith('…')).toBe(true);
      expect(Buffer.from(cut, 'utf8').toString('utf8')).toBe(cut); // no lone surrogate to replace
      expect(cut.isWellFormed()).toBe(true);
    }
  });
});
