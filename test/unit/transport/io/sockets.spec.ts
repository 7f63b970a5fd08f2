import { SEND_RECHECK_MS } from '../../../../lib/transport/timing.js';
import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Socket } from 'zeromq';
import { MAX_MESSAGE_BYTES } from '../../../../lib/transport/io/socket-limits.js';
import {
  clientDealer,
  listenerRouter,
  meshRouter,
  observed,
  publisherSocket,
  subscriberSocket,
} from '../../../../lib/transport/io/sockets.js';

/** The one socket factory: every role's options, and no zeromq socket made anywhere else in lib/. */

const opened: Socket[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});
function open<S extends Socket>(socket: S): S {
  opened.push(socket);
  return socket;
}

describe('socket factory', () => {
  const noHeartbeats = { heartbeatInterval: 0 };
  const keepalive = { tcpKeepalive: 1, tcpKeepaliveIdle: 10, tcpKeepaliveInterval: 5, tcpKeepaliveCount: 3 };

  it('mesh router: a random routing id (never the NodeRid), handover, no ZMTP heartbeats, TCP keepalive', () => {
    const s = open(meshRouter(true));
    const t = open(meshRouter(false));
    expect(s.routingId).toMatch(/^z[\w-]{22}$/);
    expect(s.routingId).not.toBe(t.routingId);
    expect(s).toMatchObject({ linger: 0, ipv6: true, maxMessageSize: MAX_MESSAGE_BYTES });
    expect(s).toMatchObject({ ...noHeartbeats, ...keepalive, handshakeInterval: 10000 });
  });

  it('listener router: no ZMTP heartbeats, TCP keepalive, a 10 s handshake bound', () => {
    const s = open(listenerRouter(false));
    expect(s).toMatchObject({ linger: 0, ipv6: false, maxMessageSize: MAX_MESSAGE_BYTES });
    expect(s).toMatchObject({ ...noHeartbeats, ...keepalive, handshakeInterval: 10000 });
  });

  it('client dealer: immediate, a small send HWM, the pump recheck as send timeout, no ZMTP heartbeats', () => {
    const s = open(clientDealer('tcp://[::1]:5555'));
    expect(s).toMatchObject({ linger: 0, immediate: true, ipv6: true, maxMessageSize: MAX_MESSAGE_BYTES });
    expect(s).toMatchObject({ sendHighWaterMark: 32, sendTimeout: SEND_RECHECK_MS });
    expect(s).toMatchObject({ ...noHeartbeats, ...keepalive });
    expect(open(clientDealer('tcp://127.0.0.1:5555')).ipv6).toBe(false);
  });

  it('publisher: an XPUB with the channel HWM (noDrop and verbosity are write-only in libzmq)', () => {
    const s = open(publisherSocket({ noDrop: true, sendHighWaterMark: 77, ipv6: false }));
    expect(s).toMatchObject({ linger: 0, sendHighWaterMark: 77, ipv6: false });
  });

  it('subscriber: the channel receive HWM and the message size bound', () => {
    const s = open(subscriberSocket('tcp://127.0.0.1:5555', 123));
    expect(s).toMatchObject({ linger: 0, receiveHighWaterMark: 123, maxMessageSize: MAX_MESSAGE_BYTES });
  });

  it('the mesh router and the client dealer are observed from the start (the observer zeromq.js keeps)', () => {
    for (const s of [open(meshRouter(false)), open(clientDealer('tcp://127.0.0.1:1'))]) {
      const first = s.events;
      expect(s.events).toBe(first);
      expect(first.closed).toBe(false);
    }
  });

  it('an observer whose inproc endpoint is still taken (EADDRINUSE) is asked for again, up to 4 times', () => {
    const socketFailing = (failures: number, code = 'EADDRINUSE') => {
      let asked = 0;
      const socket = {
        get events() {
          asked++;
          if (asked <= failures) throw Object.assign(new Error('Address already in use'), { code });
          return { closed: false };
        },
      };
      return { socket: socket as unknown as Socket, asked: () => asked };
    };
    const twice = socketFailing(2);
    expect(observed(twice.socket)).toBe(twice.socket);
    expect(twice.asked()).toBe(3);
    const always = socketFailing(99);
    expect(() => observed(always.socket)).toThrow('Address already in use');
    expect(always.asked()).toBe(4);
    const other = socketFailing(1, 'EMFILE');
    expect(() => observed(other.socket)).toThrow('Address already in use');
    expect(other.asked()).toBe(1);
  });

  it('no file in lib/ but transport/io/sockets.ts constructs a zeromq socket', () => {
    const root = join(process.cwd(), 'lib');
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith('.ts')) files.push(path);
      }
    };
    walk(root);
    const constructing = files
      .filter((f) =>
        /new\s+(zmq\.)?(Router|Dealer|Publisher|XPublisher|Subscriber|XSubscriber|Pair|Push|Pull|Request|Reply|Stream)\s*\(/.test(
          readFileSync(f, 'utf8'),
        ),
      )
      .map((f) => relative(root, f));
    expect(constructing).toEqual(['transport/io/sockets.ts']);
  });
});
