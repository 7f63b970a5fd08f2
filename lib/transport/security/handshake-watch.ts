import type { Socket } from 'zeromq';

/** Why a connection's security handshake failed, as `security_refused` reports it. */
export type HandshakeRefusal = 'mechanismMismatch' | 'unknownKey' | 'handshakeFailed';

/** What a socket's owner does with its connection events. */
export interface HandshakeWatch {
  /**
   * A connection finished its handshake (`address`: the endpoint connected to, or ours for an accepted one).
   */
  handshake(address: string): void;
  disconnect(address: string): void;
  /**
   * A handshake failed for its security: `mechanismMismatch` (one side speaks CURVE, the other does
   * not), `unknownKey` (the side we connected to refused our key), `handshakeFailed` (the keys do not
   * match: the other side does not hold the key we connected to, or we are not the server it expects).
   */
  refused(reason: HandshakeRefusal, address: string, code: string): void;
}

/**
 * Reads `socket`'s connection events with `receive()` until it closes. Not `events.on()`: zeromq.js
 * installs that emitter once per process on the native Observer prototype, bound to the `require` of
 * the first module instance that used it, which breaks once that instance is gone (e.g. between jest
 * test files). `closed()` ends the loop early (its owner is closing).
 */
export async function watchHandshakes(
  socket: Socket,
  on: HandshakeWatch,
  closed: () => boolean = () => false,
): Promise<void> {
  const events = socket.events;
  try {
    while (!events.closed) {
      const event = await events.receive();
      if (closed()) return;
      const address = 'address' in event ? String(event.address) : '';
      switch (event.type) {
        case 'handshake':
          on.handshake(address);
          break;
        case 'disconnect':
          on.disconnect(address);
          break;
        case 'handshake:error:protocol': {
          const code = event.error.code;
          on.refused(
            code === 'ERR_ZMTP_MECHANISM_MISMATCH' ? 'mechanismMismatch' : 'handshakeFailed',
            address,
            code,
          );
          break;
        }
        case 'handshake:error:auth':
          on.refused('unknownKey', address, `ZAP ${event.error.status}`);
          break;
        case 'handshake:error:other':
          on.refused('handshakeFailed', address, event.error.code ?? 'unknown');
          break;
      }
    }
  } catch {
    // The observer closed with its socket.
  }
}

/**
 * The one wording of a refused handshake, from the side that saw it: `self` names this side ("this
 * node", "this client"), `peer` the other ("the server at tcp://…"), `curve` whether this side speaks CURVE.
 */
export function refusalDetail(
  reason: HandshakeRefusal,
  curve: boolean,
  self: string,
  peer: string,
  code: string,
): string {
  switch (reason) {
    case 'mechanismMismatch':
      return curve
        ? `${self} speaks CURVE; ${peer} does not (give it security.curve)`
        : `${self} speaks plain ZMTP; ${peer} speaks CURVE (give ${self} security.curve)`;
    case 'unknownKey':
      return `${peer} does not know ${self}'s public key`;
    case 'handshakeFailed':
      return `${peer}: the CURVE handshake failed (${code}): its key is not the one it is known by here, or ${self}'s is not the one it expects`;
  }
}
