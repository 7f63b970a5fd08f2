import {
  CLIENT_MAX_FRAME_BYTES,
  GRACEFUL_CLOSE_MS,
  type SessionTransport,
  type SessionTransportOpener,
  unref,
} from './session-transport.js';

/**
 * What the WebSocket transport uses of a WebSocket: the part a browser's (WHATWG) WebSocket and the
 * `ws` package's share. `terminate` is `ws`'s drop without a closing handshake; a browser has none.
 */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  terminate?(): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { readonly data: unknown }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onclose: ((event: { readonly code: number; readonly reason: string }) => void) | null;
}

/** `readyState` of an open WebSocket (the same number in browsers and in `ws`). */
const OPEN = 1;

/**
 * A WebSocket carrying the session (docs/sessions-wire.md#framing): one binary message is one frame
 * body, with no length prefix. A text message, an empty one or one past `CLIENT_MAX_FRAME_BYTES` is
 * a fault: the listener never sends one. `open` makes the socket (it may throw: a URL the WebSocket
 * refuses); it is told `closed` then, as for a connection that fails.
 */
export function webSocketTransport(open: () => WebSocketLike): SessionTransportOpener {
  return (events) => {
    let closed = false;
    let failure = '';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = (detail: string): void => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      events.closed(detail);
    };
    let socket: WebSocketLike;
    try {
      socket = open();
    } catch (error) {
      queueMicrotask(() => done(`the connection failed: ${(error as Error)?.message ?? String(error)}`));
      return { send: () => undefined, close: () => undefined };
    }
    socket.binaryType = 'arraybuffer';
    socket.onopen = () => events.opened();
    socket.onmessage = ({ data }) => {
      const body = bytesOf(data);
      if (body === undefined) return events.fault('a text message (every frame is a binary message)');
      if (body.length === 0) return events.fault('emptyFrame');
      if (body.length > CLIENT_MAX_FRAME_BYTES) return events.fault('frameTooLarge');
      events.body(body);
    };
    socket.onerror = (event) => {
      const message = (event as { message?: unknown } | undefined)?.message;
      if (typeof message === 'string' && message !== '') failure = `: ${message}`;
    };
    socket.onclose = ({ code, reason }) =>
      done(`the connection closed (WebSocket ${code}${reason ? ` ${reason}` : ''})${failure}`);
    const transport: SessionTransport = {
      send(body) {
        // A copy: the caller's bytes are a view of the codec's buffer (see SessionTransport.send).
        if (!closed && socket.readyState === OPEN) socket.send(body.slice());
      },
      close(graceful) {
        if (closed) return;
        if (!graceful && socket.terminate) socket.terminate();
        else socket.close(1000);
        // A peer that never answers the closing handshake is dropped (where the WebSocket can) and
        // the close reported all the same.
        if (timer !== undefined) return;
        timer = setTimeout(() => {
          socket.terminate?.();
          done('the connection closed (no closing handshake)');
        }, GRACEFUL_CLOSE_MS);
        unref(timer);
      },
    };
    return transport;
  };
}

/**
 * A binary message's bytes (an ArrayBuffer with `binaryType` 'arraybuffer', or a view), or
 * `undefined` for a text message. Not `instanceof`: the WebSocket may come from another realm.
 */
function bytesOf(data: unknown): Uint8Array | undefined {
  if (typeof data === 'string' || data === null || typeof data !== 'object') return undefined;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const length = (data as { byteLength?: unknown }).byteLength;
  return typeof length === 'number' ? new Uint8Array(data as ArrayBuffer) : undefined;
}
