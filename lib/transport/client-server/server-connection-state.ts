import { RECONNECT_MAX_MS, RECONNECT_MIN_MS } from '../timing.js';
/**
 * The states of one Client DEALER connection to one Server endpoint (docs/protocol.md#clientserver-handshake)
 * and the one pure function that moves between them. No sockets, no timers: `ServerConnection` runs those as
 * the effects of entering a state (hello repeats in `handshaking`, the replacement DEALER waits in `lost`).
 */

export type ConnectionState =
  /** The DEALER connects; zeromq has not reported a completed handshake. */
  | { readonly status: 'connecting'; readonly backoffMs: number; readonly mismatched: boolean }
  /** Connected; hello repeats until a welcome answers. */
  | { readonly status: 'handshaking'; readonly backoffMs: number; readonly mismatched: boolean }
  /** The server confirmed a listed identity on this connection: a candidate. */
  | { readonly status: 'ready' }
  /** Connected and answering, with an identity discovery does not list (yet): not a candidate. */
  | { readonly status: 'unconfirmed' }
  /** The server answered for another channel: never a candidate on this connection. */
  | { readonly status: 'mismatched'; readonly backoffMs: number }
  /** The connection dropped: the DEALER is read out and closed, a new one starts after `delayMs`. */
  | { readonly status: 'lost'; readonly delayMs: number; readonly mismatched: boolean }
  /** Leaving for good: never ready again; closes once its requests end or it is no longer connected. */
  | { readonly status: 'retiring'; readonly connected: boolean }
  | { readonly status: 'closed' };

export type ConnectionStatus = ConnectionState['status'];

export type ConnectionEvent =
  /** zeromq reported the current DEALER's handshake. */
  | { readonly type: 'connected' }
  /** zeromq reported the current DEALER's connection down. */
  | { readonly type: 'disconnected' }
  /**
   * A welcome: `channelMatches` whether it serves our channel, `accepted` whether the identity it
   * confirms may become ready here (`ServerConnectionConfig.accepts`).
   */
  | { readonly type: 'welcome'; readonly channelMatches: boolean; readonly accepted: boolean }
  /** The discovered list changed: whether the confirmed identity is still (or now) accepted. */
  | { readonly type: 'recheck'; readonly accepted: boolean }
  /** The lost DEALER was read out and the backoff waited: a new DEALER connects. */
  | { readonly type: 'reconnect' }
  | { readonly type: 'retire' }
  | { readonly type: 'close' };

/**
 * A new connection (`mismatched` remembers, across reconnects, that the endpoint's last answer
 * was for another channel: such an endpoint does not count as on its way to ready).
 */
export const CONNECTING: ConnectionState = {
  status: 'connecting',
  backoffMs: RECONNECT_MIN_MS,
  mismatched: false,
};

/** Whether a DEALER connection is up (zeromq reported its handshake and not its loss since). */
export function isConnected(state: ConnectionState): boolean {
  switch (state.status) {
    case 'handshaking':
    case 'ready':
    case 'unconfirmed':
    case 'mismatched':
      return true;
    case 'retiring':
      return state.connected;
    default:
      return false;
  }
}

/** Still on its way to ready: not closed, not retiring, and not last answered for another channel. */
export function isConnecting(state: ConnectionState): boolean {
  switch (state.status) {
    case 'connecting':
    case 'handshaking':
    case 'lost':
      return !state.mismatched;
    case 'unconfirmed':
      return true;
    default:
      return false;
  }
}

/**
 * The next state. An event a state does not take returns `state` itself (the same object): the
 * connection then runs no effect. A different object, even of the same status (a repeated welcome
 * on a ready connection), is entered again: its effects run again.
 */
export function transition(state: ConnectionState, event: ConnectionEvent): ConnectionState {
  switch (event.type) {
    case 'close':
      return state.status === 'closed' ? state : { status: 'closed' };
    case 'retire':
      if (state.status === 'retiring' || state.status === 'closed') return state;
      return { status: 'retiring', connected: isConnected(state) };
    case 'connected':
      // One handshake per DEALER: a lost one was disconnected by us and is being replaced.
      return state.status === 'connecting' ? { ...state, status: 'handshaking' } : state;
    case 'disconnected':
      return disconnected(state);
    case 'reconnect':
      if (state.status !== 'lost') return state;
      return {
        status: 'connecting',
        backoffMs: Math.min(state.delayMs * 2, RECONNECT_MAX_MS),
        mismatched: state.mismatched,
      };
    case 'welcome':
      return welcome(state, event.channelMatches, event.accepted);
    case 'recheck':
      if (state.status === 'unconfirmed' && event.accepted) return { status: 'ready' };
      if (state.status === 'ready' && !event.accepted) return { status: 'unconfirmed' };
      return state;
  }
}

function disconnected(state: ConnectionState): ConnectionState {
  switch (state.status) {
    case 'connecting':
    case 'handshaking':
      return { status: 'lost', delayMs: state.backoffMs, mismatched: state.mismatched };
    case 'mismatched':
      return { status: 'lost', delayMs: state.backoffMs, mismatched: true };
    case 'ready':
    case 'unconfirmed':
      // A welcome on this connection started the backoff over.
      return { status: 'lost', delayMs: RECONNECT_MIN_MS, mismatched: false };
    case 'retiring':
      return state.connected ? { status: 'retiring', connected: false } : state;
    default:
      return state; // lost (already down) or closed
  }
}

function welcome(state: ConnectionState, channelMatches: boolean, accepted: boolean): ConnectionState {
  switch (state.status) {
    case 'connecting':
    case 'lost':
      // Read while not connected (a lost DEALER's last records): only what it says is kept.
      return state.mismatched === !channelMatches ? state : { ...state, mismatched: !channelMatches };
    case 'handshaking':
    case 'mismatched':
      if (!channelMatches) {
        // Definitive for this connection: no more hellos (a reconnect starts over).
        return state.status === 'mismatched' ? state : { status: 'mismatched', backoffMs: state.backoffMs };
      }
      return accepted ? { status: 'ready' } : { status: 'unconfirmed' };
    case 'ready':
      // A welcome to a repeated hello confirms readiness again.
      if (!channelMatches) return state;
      return accepted ? { status: 'ready' } : { status: 'unconfirmed' };
    case 'unconfirmed':
      return channelMatches && accepted ? { status: 'ready' } : state;
    default:
      return state; // retiring or closed: never ready again
  }
}
