import { Buffer } from 'node:buffer';
import { describe, expect, it } from '@jest/globals';
import { Packr } from 'msgpackr';
import {
  type NormalizedSessionListener,
  type SessionCloseReason,
  type SessionLinkHandler,
  type SessionResumeAsk,
  SessionCloseCode,
  SessionFrameKind,
  frame,
} from '../../../../lib/core/index.js';
import { type ConnectionHost, SessionConnection } from '../../../../lib/transport/session/index.js';

/**
 * A connection's part of resume after a drop (docs/sessions-wire.md#resume-after-a-drop), without a
 * socket: the Hello's `resume` reaches the handler, a Welcome with terms makes the link resumable and
 * takes over the correlations it may still answer, an Ack reaches the handler, and an end without a
 * Close frame (lost, silent or dropped) is told as a drop, with no Close frame written.
 */

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });
const framed = (items: unknown[]): Buffer => Buffer.from(frame(new Uint8Array(packr.pack(items))));

class BareConnection extends SessionConnection {
  get writeBytes(): number {
    return 0;
  }
}

function harness() {
  const written: unknown[][] = [];
  const heard: string[] = [];
  const asks: (SessionResumeAsk | undefined)[] = [];
  const handler: SessionLinkHandler = {
    opened: (_link, _token, resume) => {
      asks.push(resume);
      heard.push('opened');
    },
    request: (_link, correlation) => heard.push(`request ${correlation}`),
    send: (_link, packet) => heard.push(`send ${packet}`),
    closed: (_link, reason: SessionCloseReason, _detail, dropped) =>
      heard.push(`closed ${reason}${dropped ? ' dropped' : ''}`),
    acked: (_link, received) => heard.push(`acked ${received}`),
  };
  const host: ConnectionHost = {
    options: {
      listener: 'game',
      maxFrameBytes: 1024,
      maxInFlight: 8,
      heartbeatMs: 1000,
    } as NormalizedSessionListener,
    handler,
    welcomed: () => undefined,
    write: (_c, f) => written.push(packr.unpack(f.subarray(4)) as unknown[]),
    ended: () => undefined,
  };
  const connection = new BareConnection(host, 0, { address: '127.0.0.1', port: 40000, family: 'IPv4' });
  const kinds = () => written.map((w) => (w[0] === SessionFrameKind.Close ? `close ${String(w[1])}` : w[0]));
  return { connection, written, heard, asks, kinds };
}

const terms = (awaiting: number[] = [], resumed = false) => ({
  token: 'tok',
  graceMs: 30000,
  received: 5,
  resumed,
  awaiting,
});

function resumable(awaiting: number[] = []) {
  const h = harness();
  h.connection.receive(framed([1, 1, 't', []]), 1);
  h.connection.welcome('s-1', terms(awaiting, awaiting.length > 0));
  h.written.length = 0;
  h.heard.length = 0;
  return h;
}

describe('SessionConnection: resume', () => {
  it("hands the Hello's resume to the handler: none, a new resumable session, or a resume", () => {
    for (const [resume, ask] of [
      [undefined, undefined],
      [[], { kind: 'new' }],
      [['s-1', 'tok', 2], { kind: 'resume', sessionId: 's-1', token: 'tok', received: 2 }],
    ] as const) {
      const h = harness();
      h.connection.receive(framed(resume === undefined ? [1, 1, 't'] : [1, 1, 't', resume]), 1);
      expect(h.asks).toEqual([ask]);
    }
  });

  it('a Welcome with terms carries token, grace and received, and makes the link resumable', () => {
    const h = harness();
    h.connection.receive(framed([1, 1, 't', []]), 1);
    h.connection.welcome('s-1', terms());
    expect(h.written).toEqual([[2, 1, 's-1', 1000, 1024, 8, 'tok', 30000, 5]]);
    expect(h.connection.resumable).toBe(true);
    expect(h.connection.resumed).toBe(false);
  });

  it('an Ack reaches the handler on a resumable link, and closes protocolError on another', () => {
    const h = resumable();
    h.connection.receive(framed([11, 3]), 2);
    expect(h.heard).toEqual(['acked 3']);
    const plain = harness();
    plain.connection.receive(framed([1, 1, 't']), 1);
    plain.connection.welcome('s-2');
    plain.connection.receive(framed([11, 3]), 2);
    expect(plain.kinds()).toEqual([2, `close ${SessionCloseCode.protocolError}`]);
  });

  it('a connection lost without a Close frame is a drop; a Close frame from the client is not', () => {
    const lost = resumable();
    lost.connection.finish('normal', 'the connection is gone', true);
    expect(lost.heard).toEqual(['closed normal dropped']);
    expect(lost.connection.dropped).toBe(true);
    const said = resumable();
    said.connection.receive(framed([10, 1000, 'bye']), 2);
    expect(said.heard).toEqual(['closed normal']);
    expect(said.connection.dropped).toBe(false);
  });

  it('drop() ends it with no Close frame, told as a drop; close() writes one and is final', () => {
    const dropped = resumable();
    dropped.connection.drop('idleTimeout', 'nothing heard');
    dropped.connection.drop('idleTimeout', 'again');
    expect(dropped.written).toEqual([]);
    expect(dropped.heard).toEqual(['closed idleTimeout dropped']);
    const closed = resumable();
    closed.connection.close('goingAway', 'draining');
    expect(closed.kinds()).toEqual([`close ${SessionCloseCode.goingAway}`]);
    expect(closed.heard).toEqual(['closed goingAway']);
  });

  it('a link that is not resumable is never told as a drop', () => {
    const h = harness();
    h.connection.receive(framed([1, 1, 't']), 1);
    h.connection.welcome('s-3');
    h.connection.finish('normal', 'the connection is gone', true);
    expect(h.heard).toEqual(['opened', 'closed normal']);
  });

  it('a resumed link answers each correlation it took over once, and counts them in flight', () => {
    const h = resumable([4, 9]);
    expect(h.connection.awaiting).toBe(2);
    expect(h.connection.reply(4, new Uint8Array([0xc0]))).toBe(true);
    expect(h.connection.reply(4, new Uint8Array([0xc0]))).toBe(false);
    expect(h.connection.error(9, 'Timeout', 'late')).toBe(true);
    expect(h.connection.reply(7, new Uint8Array([0xc0]))).toBe(false);
    expect(h.kinds()).toEqual([4, 5]);
    expect(h.connection.awaiting).toBe(0);
  });
});
