import { Buffer } from 'node:buffer';
import { describe, expect, it } from '@jest/globals';
import { Packr } from 'msgpackr';
import {
  type NormalizedSessionListener,
  type SessionCloseReason,
  type SessionLink,
  type SessionLinkHandler,
  SessionCloseCode,
  SessionFrameKind,
  SESSION_PROTOCOL_VERSION,
  frame,
} from '../../../../lib/core/index.js';
import { type ConnectionHost, SessionConnection } from '../../../../lib/transport/session/index.js';

/**
 * One session connection's framing and states, without a socket: length-prefixed frames arrive in
 * chunks of any size, a connection goes hello -> opening -> open -> closed, and every fault of its
 * input closes it once, with the reason its Close frame carries.
 */

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });
const framed = (items: unknown[]): Buffer => Buffer.from(frame(new Uint8Array(packr.pack(items))));
const hello = (version = SESSION_PROTOCOL_VERSION) => framed([SessionFrameKind.Hello, version, 'token']);
const request = (correlation: number, packet = 'echo') =>
  framed([SessionFrameKind.Request, correlation, packet, { n: correlation }]);
const send = (packet = 'note') => framed([SessionFrameKind.Send, packet, 1]);
const ping = () => framed([SessionFrameKind.Ping]);

const MAX_FRAME = 256;

/** A connection whose socket holds nothing: what is tested here is the frames and states alone. */
class BareConnection extends SessionConnection {
  get writeBytes(): number {
    return 0;
  }
}

function harness(maxInFlight = 4) {
  const written: Buffer[] = [];
  const ended: { reason: SessionCloseReason; byClient: boolean }[] = [];
  const heard: string[] = [];
  const handler: SessionLinkHandler = {
    opened: (_link, token) => heard.push(`opened ${String(token)}`),
    request: (_link, correlation, packet) => heard.push(`request ${correlation} ${packet}`),
    send: (_link, packet) => heard.push(`send ${packet}`),
    closed: (_link: SessionLink, reason) => heard.push(`closed ${reason}`),
  };
  const host: ConnectionHost = {
    options: {
      listener: 'game',
      maxFrameBytes: MAX_FRAME,
      maxInFlight,
      heartbeatMs: 1000,
    } as NormalizedSessionListener,
    handler,
    welcomed: () => heard.push('welcomed'),
    write: (_c, f) => written.push(f),
    ended: (_c, reason, _detail, byClient) => ended.push({ reason, byClient }),
  };
  const connection = new BareConnection(host, 0, { address: '127.0.0.1', port: 40000, family: 'IPv4' });
  /** The kinds of the frames written to the client, and a Close frame's code. */
  const kinds = () =>
    written.map((w) => {
      const items = packr.unpack(w.subarray(4)) as unknown[];
      return items[0] === SessionFrameKind.Close ? `close ${String(items[1])}` : items[0];
    });
  return { connection, written, ended, heard, kinds };
}

/** Opens a session: Hello in, Welcome out. */
function opened(maxInFlight?: number) {
  const h = harness(maxInFlight);
  h.connection.receive(hello(), 1);
  h.connection.welcome('s-1');
  h.written.length = 0;
  h.heard.length = 0;
  return h;
}

describe('SessionConnection: framing', () => {
  it('reads a frame whose length prefix and body arrive one byte at a time', () => {
    const h = opened();
    const bytes = request(7);
    for (let i = 0; i < bytes.length; i++) {
      expect(h.heard).toEqual([]);
      h.connection.receive(bytes.subarray(i, i + 1), 2);
    }
    expect(h.heard).toEqual(['request 7 echo']);
  });

  it('reads several frames from one chunk, and a frame split across two chunks, in order', () => {
    const h = opened();
    const all = Buffer.concat([request(1), send('a'), request(2), send('b')]);
    const cut = request(1).length + 3; // inside the Send frame's body
    h.connection.receive(all.subarray(0, cut), 2);
    expect(h.heard).toEqual(['request 1 echo']);
    h.connection.receive(all.subarray(cut), 3);
    expect(h.heard).toEqual(['request 1 echo', 'send a', 'request 2 echo', 'send b']);
  });

  it('counts the bytes of a frame still being gathered, and frees them once it is whole', () => {
    const h = opened();
    const bytes = request(3);
    h.connection.receive(bytes.subarray(0, 3), 2);
    expect(h.connection.heldBytes).toBe(3); // a length prefix not yet whole
    h.connection.receive(bytes.subarray(3, 10), 3);
    expect(h.connection.heldBytes).toBe(6); // the prefix is read; 6 body bytes wait
    h.connection.receive(bytes.subarray(10), 4);
    expect(h.connection.heldBytes).toBe(0);
    expect(h.heard).toEqual(['request 3 echo']);
  });

  it('closes frameTooLarge on a length prefix over maxFrameBytes, before its body arrives', () => {
    const h = opened();
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(MAX_FRAME + 1);
    h.connection.receive(prefix, 2);
    expect(h.kinds()).toEqual([`close ${SessionCloseCode.frameTooLarge}`]);
    expect(h.ended).toEqual([{ reason: 'frameTooLarge', byClient: false }]);
    expect(h.heard).toEqual(['closed frameTooLarge']);
    expect(h.connection.open).toBe(false);
  });

  it('accepts a frame of exactly maxFrameBytes', () => {
    const h = opened();
    // array head 1, kind 1, 'big' 4, str8 head 2: the rest of the body is the string.
    const exact = framed([SessionFrameKind.Send, 'big', 'x'.repeat(MAX_FRAME - 8)]);
    expect(exact.length - 4).toBe(MAX_FRAME);
    h.connection.receive(exact, 2);
    expect(h.heard).toEqual(['send big']);
    expect(h.connection.open).toBe(true);
  });

  it('closes protocolError on an empty frame, after the frames before it', () => {
    const h = opened();
    h.connection.receive(Buffer.concat([send('before'), Buffer.alloc(4), send('after')]), 2);
    expect(h.heard).toEqual(['send before', 'closed protocolError']);
    expect(h.kinds()).toEqual([`close ${SessionCloseCode.protocolError}`]);
  });

  it('reads nothing after it closed: the rest of a chunk and later chunks are dropped', () => {
    const h = opened();
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(MAX_FRAME * 2);
    h.connection.receive(Buffer.concat([prefix, send('late')]), 2);
    h.connection.receive(send('later'), 3);
    expect(h.heard).toEqual(['closed frameTooLarge']);
    expect(h.ended).toHaveLength(1);
  });
});

describe('SessionConnection: the idle clock (docs/sessions.md#idle-timeout)', () => {
  it('sets heardAt to the time a frame completes, and moves it 1 ms a byte for bytes that complete none', () => {
    const h = opened();
    expect(h.connection.heardAt).toBe(1); // the Hello
    const bytes = request(5);
    h.connection.receive(bytes.subarray(0, 10), 1000);
    expect(h.connection.heardAt).toBe(11);
    h.connection.receive(bytes.subarray(10, 12), 2000);
    expect(h.connection.heardAt).toBe(13);
    h.connection.receive(bytes.subarray(12), 3000);
    expect(h.heard).toEqual(['request 5 echo']);
    expect(h.connection.heardAt).toBe(3000);
    // A chunk that completes a frame and starts the next: heard at its time.
    h.connection.receive(Buffer.concat([ping(), send().subarray(0, 3)]), 4000);
    expect(h.connection.heardAt).toBe(4000);
  });

  it('lags a frame trickling in a byte a second by nearly a second a second', () => {
    const h = opened();
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(MAX_FRAME);
    h.connection.receive(prefix, 1);
    for (let second = 1; second <= 30; second++) h.connection.receive(Buffer.alloc(1), 1 + second * 1000);
    // The prefix came with the Hello's time; then 30 bytes: 30 ms heard of the 30 s gone by.
    expect(h.connection.heardAt).toBe(1 + 30);
    expect(h.connection.open).toBe(true);
  });

  it('keeps up with a frame arriving at 1,000 bytes a second or faster, and never runs ahead of now', () => {
    const h = opened();
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(MAX_FRAME);
    h.connection.receive(prefix, 101);
    expect(h.connection.heardAt).toBe(5); // 100 ms behind, 4 bytes made up
    h.connection.receive(Buffer.alloc(200), 201);
    expect(h.connection.heardAt).toBe(201); // caught up: 200 bytes in 100 ms
    h.connection.receive(Buffer.alloc(50), 251);
    expect(h.connection.heardAt).toBe(251); // exactly the rate: still level
    h.connection.heardBytes(1000, 300);
    expect(h.connection.heardAt).toBe(300); // bytes to spare are not banked
  });
});

describe('SessionConnection: one body per message (receiveBody)', () => {
  const body = (items: unknown[]): Uint8Array => new Uint8Array(packr.pack(items));

  it('takes whole bodies with no length prefix, through the same states as a stream', () => {
    const h = harness();
    h.connection.receiveBody(body([SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, 'token']), 1);
    h.connection.welcome('s-1');
    h.connection.receiveBody(body([SessionFrameKind.Request, 4, 'echo', 1]), 2);
    h.connection.receiveBody(body([SessionFrameKind.Ping]), 3);
    expect(h.heard).toEqual(['opened token', 'welcomed', 'request 4 echo']);
    expect(h.kinds()).toEqual([SessionFrameKind.Welcome, SessionFrameKind.Pong]);
    expect(h.connection.heardAt).toBe(3);
    expect(h.connection.heldBytes).toBe(0);
  });

  it('closes frameTooLarge on a body over maxFrameBytes and protocolError on an empty one', () => {
    const big = opened();
    big.connection.receiveBody(new Uint8Array(MAX_FRAME + 1), 2);
    expect(big.ended).toEqual([{ reason: 'frameTooLarge', byClient: false }]);
    expect(big.kinds()).toEqual([`close ${SessionCloseCode.frameTooLarge}`]);
    const empty = opened();
    empty.connection.receiveBody(new Uint8Array(0), 2);
    expect(empty.ended).toEqual([{ reason: 'protocolError', byClient: false }]);
    empty.connection.receiveBody(body([SessionFrameKind.Send, 'late', 1]), 3);
    expect(empty.heard).toEqual(['closed protocolError']);
  });

  it('accepts a body of exactly maxFrameBytes', () => {
    const h = opened();
    h.connection.receiveBody(body([SessionFrameKind.Send, 'big', 'x'.repeat(MAX_FRAME - 8)]), 2);
    expect(h.heard).toEqual(['send big']);
  });
});

describe('SessionConnection: session states', () => {
  it('hello -> opening -> open: the handler hears the Hello, then the Welcome goes out', () => {
    const h = harness();
    expect(h.connection.handshaking).toBe(true);
    h.connection.receive(hello(), 1);
    expect(h.heard).toEqual(['opened token']);
    expect(h.connection.handshaking).toBe(true);
    expect(h.connection.welcomed).toBe(false);
    h.connection.welcome('s-1');
    expect(h.connection.welcomed).toBe(true);
    expect(h.kinds()).toEqual([SessionFrameKind.Welcome]);
    const welcome = packr.unpack(h.written[0]!.subarray(4)) as unknown[];
    expect(welcome).toEqual([SessionFrameKind.Welcome, SESSION_PROTOCOL_VERSION, 's-1', 1000, MAX_FRAME, 4]);
    expect(h.connection.sessionId).toBe('s-1');
  });

  it('a first frame that is not a Hello closes protocolError, and the handler never hears of it', () => {
    const h = harness();
    h.connection.receive(send(), 1);
    expect(h.ended).toEqual([{ reason: 'protocolError', byClient: false }]);
    expect(h.heard).toEqual([]);
  });

  it('a Hello of another version closes unsupportedVersion', () => {
    const h = harness();
    h.connection.receive(hello(SESSION_PROTOCOL_VERSION + 1), 1);
    expect(h.kinds()).toEqual([`close ${SessionCloseCode.unsupportedVersion}`]);
    expect(h.heard).toEqual([]);
  });

  it('a business frame while the Welcome is pending closes protocolError; a Ping is answered', () => {
    const h = harness();
    h.connection.receive(Buffer.concat([hello(), ping()]), 1);
    expect(h.kinds()).toEqual([SessionFrameKind.Pong]);
    h.connection.receive(request(1), 2);
    expect(h.ended).toEqual([{ reason: 'protocolError', byClient: false }]);
    expect(h.heard).toEqual(['opened token', 'closed protocolError']);
  });

  it('a second Hello on an open session closes protocolError', () => {
    const h = opened();
    h.connection.receive(hello(), 2);
    expect(h.heard).toEqual(['closed protocolError']);
  });

  it('a correlation already in flight closes protocolError; an answered one may come again', () => {
    const h = opened();
    h.connection.receive(request(5), 2);
    expect(h.connection.awaiting).toBe(1);
    expect(h.connection.reply(5, new Uint8Array([0xc0]))).toBe(true);
    expect(h.connection.reply(5, new Uint8Array([0xc0]))).toBe(false);
    h.connection.receive(request(5), 3);
    h.connection.receive(request(5), 4);
    expect(h.heard).toEqual(['request 5 echo', 'request 5 echo', 'closed protocolError']);
  });

  it('more requests in flight than maxInFlight closes tooManyInFlight', () => {
    const h = opened(2);
    h.connection.receive(Buffer.concat([request(1), request(2), request(3)]), 2);
    expect(h.heard).toEqual(['request 1 echo', 'request 2 echo', 'closed tooManyInFlight']);
    expect(h.kinds()).toEqual([`close ${SessionCloseCode.tooManyInFlight}`]);
  });

  it("the client's Close ends the session by the client, without a Close frame back", () => {
    const h = opened();
    h.connection.receive(framed([SessionFrameKind.Close, SessionCloseCode.normal, 'bye']), 2);
    expect(h.written).toEqual([]);
    expect(h.ended).toEqual([{ reason: 'normal', byClient: true }]);
    expect(h.heard).toEqual(['closed normal']);
  });

  it('ends once: a second close, a late reply or push, and a late Welcome do nothing', () => {
    const h = opened();
    h.connection.receive(request(9), 2);
    h.connection.close('goingAway', 'draining');
    h.connection.close('serverError');
    h.connection.finish('normal', 'gone', true);
    expect(h.connection.reply(9, new Uint8Array([0xc0]))).toBe(false);
    expect(h.connection.push('p', new Uint8Array([0xc0]))).toBe(false);
    h.connection.welcome('s-2');
    expect(h.ended).toEqual([{ reason: 'goingAway', byClient: false }]);
    expect(h.kinds()).toEqual([`close ${SessionCloseCode.goingAway}`]);
    expect(h.connection.sessionId).toBe('s-1');
  });

  it('slowConsumer closes without a Close frame: a client that reads nothing would never take it', () => {
    const h = opened();
    h.connection.close('slowConsumer', 'too slow');
    expect(h.written).toEqual([]);
    expect(h.ended).toEqual([{ reason: 'slowConsumer', byClient: false }]);
  });
});
