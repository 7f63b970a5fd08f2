import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';

/**
 * What every listener on Node's own sockets (`node:net`, `node:tls`, a WebSocket's upgrade) does the
 * same with its socket: reset the connection.
 */

/**
 * Ends the TCP connection with a reset, dropping what the kernel still holds to send (a FIN would wait
 * behind bytes a slow consumer never reads). A TLS socket is reset through the TCP socket it wraps
 * (Node resets only a TCP handle); where there is none, the socket is destroyed.
 */
export function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  const tcp = socket instanceof TLSSocket ? (socket as unknown as { _parent?: Socket })._parent : socket;
  try {
    tcp?.resetAndDestroy();
  } catch {
    // Not a TCP handle after all: the destroy below still ends it.
  }
  socket.destroy();
}
