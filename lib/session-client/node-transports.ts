import { Buffer } from 'node:buffer';
import { type Socket, connect as tcpConnect } from 'node:net';
import { FrameSplitter, frame } from '../core/session-wire/index.js';
import {
  CLIENT_MAX_FRAME_BYTES,
  GRACEFUL_CLOSE_MS,
  type SessionTransport,
  type SessionTransportEvents,
  type SessionTransportOpener,
} from './session-transport.js';

/** The transport of a `tcp://` endpoint: a `node:net` connection. */
export function tcpTransport(address: { host: string; port: number }): SessionTransportOpener {
  return (events) => streamTransport(tcpConnect(address), 'connect', events);
}

/**
 * A byte stream carrying length-prefixed frames (docs/sessions-wire.md#framing): one splitter reads
 * the server's bodies back out of whatever chunks arrive, and the frames queued in one turn leave in
 * one socket write, not a syscall and a TCP segment each (a burst of requests reaches the server as a
 * few reads).
 */
function streamTransport(socket: Socket, ready: 'connect', events: SessionTransportEvents): SessionTransport {
  const splitter = new FrameSplitter(CLIENT_MAX_FRAME_BYTES);
  let out: Uint8Array[] = [];
  let failure = '';
  socket.setNoDelay(true);
  socket.on(ready, () => events.opened());
  socket.on('data', (chunk: Buffer) => {
    const fault = splitter.push(chunk, (body) => {
      events.body(body);
      return !socket.destroyed;
    });
    if (fault) events.fault(fault);
  });
  socket.on('error', (error) => (failure = `: ${error.message}`));
  socket.on('close', () => events.closed(`the connection closed${failure}`));
  const flush = (): void => {
    const frames = out;
    if (frames.length === 0) return;
    out = [];
    if (!socket.destroyed)
      socket.write(frames.length === 1 ? (frames[0] as Uint8Array) : Buffer.concat(frames));
  };
  return {
    send(body) {
      if (socket.destroyed) return;
      out.push(frame(body));
      if (out.length === 1) queueMicrotask(flush);
    },
    close(graceful) {
      if (!graceful) return void socket.destroy();
      flush();
      socket.end();
      setTimeout(() => socket.destroy(), GRACEFUL_CLOSE_MS).unref();
    },
  };
}
