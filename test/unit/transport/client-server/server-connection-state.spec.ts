import { RECONNECT_MAX_MS, RECONNECT_MIN_MS } from '../../../../lib/transport/timing.js';
/**
 * The ServerConnection state machine as a table: every (state, event) pair, with the state it
 * leads to or `IGNORED` (the same object comes back, so the connection runs no effect).
 */
import { describe, expect, it } from '@jest/globals';
import {
  CONNECTING,
  type ConnectionEvent,
  type ConnectionState,
  isConnected,
  isConnecting,
  transition,
} from '../../../../lib/transport/client-server/server-connection-state.js';

const states = {
  connecting: { status: 'connecting', backoffMs: 200, mismatched: false },
  connectingMismatched: { status: 'connecting', backoffMs: 200, mismatched: true },
  handshaking: { status: 'handshaking', backoffMs: 200, mismatched: false },
  handshakingMismatched: { status: 'handshaking', backoffMs: 200, mismatched: true },
  ready: { status: 'ready' },
  unconfirmed: { status: 'unconfirmed' },
  mismatched: { status: 'mismatched', backoffMs: 400 },
  lost: { status: 'lost', delayMs: 400, mismatched: false },
  lostMismatched: { status: 'lost', delayMs: 400, mismatched: true },
  retiring: { status: 'retiring', connected: true },
  retiringDown: { status: 'retiring', connected: false },
  closed: { status: 'closed' },
} satisfies Record<string, ConnectionState>;

const events = {
  connected: { type: 'connected' },
  disconnected: { type: 'disconnected' },
  welcomeAccepted: { type: 'welcome', channelMatches: true, accepted: true },
  welcomeUnlisted: { type: 'welcome', channelMatches: true, accepted: false },
  welcomeOtherChannel: { type: 'welcome', channelMatches: false, accepted: false },
  recheckAccepted: { type: 'recheck', accepted: true },
  recheckRefused: { type: 'recheck', accepted: false },
  reconnect: { type: 'reconnect' },
  retire: { type: 'retire' },
  close: { type: 'close' },
} satisfies Record<string, ConnectionEvent>;

const IGNORED = 'ignored' as const;
type Expected = ConnectionState | typeof IGNORED;
type Row = Record<keyof typeof events, Expected>;

const closed: ConnectionState = { status: 'closed' };
const ready: ConnectionState = { status: 'ready' };
const unconfirmed: ConnectionState = { status: 'unconfirmed' };
const retiringUp: ConnectionState = { status: 'retiring', connected: true };
const retiringDown: ConnectionState = { status: 'retiring', connected: false };
/** What a retiring or closed connection does with everything but `close`. */
const inert = (overrides: Partial<Row>): Row => ({
  connected: IGNORED,
  disconnected: IGNORED,
  welcomeAccepted: IGNORED,
  welcomeUnlisted: IGNORED,
  welcomeOtherChannel: IGNORED,
  recheckAccepted: IGNORED,
  recheckRefused: IGNORED,
  reconnect: IGNORED,
  retire: IGNORED,
  close: IGNORED,
  ...overrides,
});

const handshakingRow: Row = {
  connected: IGNORED,
  disconnected: { status: 'lost', delayMs: 200, mismatched: false },
  welcomeAccepted: ready,
  welcomeUnlisted: unconfirmed,
  welcomeOtherChannel: { status: 'mismatched', backoffMs: 200 },
  recheckAccepted: IGNORED,
  recheckRefused: IGNORED,
  reconnect: IGNORED,
  retire: retiringUp,
  close: closed,
};

const table: Record<keyof typeof states, Row> = {
  connecting: {
    connected: { status: 'handshaking', backoffMs: 200, mismatched: false },
    // TCP up, handshake failed: the backoff grows (an endpoint that fails every handshake).
    disconnected: { status: 'lost', delayMs: 200, mismatched: false },
    welcomeAccepted: IGNORED,
    welcomeUnlisted: IGNORED,
    welcomeOtherChannel: { status: 'connecting', backoffMs: 200, mismatched: true },
    recheckAccepted: IGNORED,
    recheckRefused: IGNORED,
    reconnect: IGNORED,
    retire: retiringDown,
    close: closed,
  },
  connectingMismatched: {
    connected: { status: 'handshaking', backoffMs: 200, mismatched: true },
    disconnected: { status: 'lost', delayMs: 200, mismatched: true },
    welcomeAccepted: { status: 'connecting', backoffMs: 200, mismatched: false },
    welcomeUnlisted: { status: 'connecting', backoffMs: 200, mismatched: false },
    welcomeOtherChannel: IGNORED,
    recheckAccepted: IGNORED,
    recheckRefused: IGNORED,
    reconnect: IGNORED,
    retire: retiringDown,
    close: closed,
  },
  handshaking: handshakingRow,
  // The same, but the next connection (after a loss) is still not counted as on its way to ready.
  handshakingMismatched: {
    ...handshakingRow,
    disconnected: { status: 'lost', delayMs: 200, mismatched: true },
  },
  ready: {
    connected: IGNORED,
    // A welcome on this connection started the backoff over.
    disconnected: { status: 'lost', delayMs: RECONNECT_MIN_MS, mismatched: false },
    // The welcome to a repeated hello: entered again (server_ready again, candidates rebuilt).
    welcomeAccepted: ready,
    welcomeUnlisted: unconfirmed,
    welcomeOtherChannel: IGNORED,
    recheckAccepted: IGNORED,
    recheckRefused: unconfirmed,
    reconnect: IGNORED,
    retire: retiringUp,
    close: closed,
  },
  unconfirmed: {
    connected: IGNORED,
    disconnected: { status: 'lost', delayMs: RECONNECT_MIN_MS, mismatched: false },
    welcomeAccepted: ready,
    welcomeUnlisted: IGNORED,
    welcomeOtherChannel: IGNORED,
    recheckAccepted: ready,
    recheckRefused: IGNORED,
    reconnect: IGNORED,
    retire: retiringUp,
    close: closed,
  },
  mismatched: {
    connected: IGNORED,
    // The next connection is not counted as on its way to ready, and the backoff was not reset.
    disconnected: { status: 'lost', delayMs: 400, mismatched: true },
    welcomeAccepted: ready,
    welcomeUnlisted: unconfirmed,
    welcomeOtherChannel: IGNORED,
    recheckAccepted: IGNORED,
    recheckRefused: IGNORED,
    reconnect: IGNORED,
    retire: retiringUp,
    close: closed,
  },
  lost: {
    // The lost DEALER was disconnected by the connection itself; a new one is on its way.
    connected: IGNORED,
    disconnected: IGNORED,
    welcomeAccepted: IGNORED,
    welcomeUnlisted: IGNORED,
    welcomeOtherChannel: { status: 'lost', delayMs: 400, mismatched: true },
    recheckAccepted: IGNORED,
    recheckRefused: IGNORED,
    reconnect: { status: 'connecting', backoffMs: 800, mismatched: false },
    retire: retiringDown,
    close: closed,
  },
  lostMismatched: {
    connected: IGNORED,
    disconnected: IGNORED,
    welcomeAccepted: { status: 'lost', delayMs: 400, mismatched: false },
    welcomeUnlisted: { status: 'lost', delayMs: 400, mismatched: false },
    welcomeOtherChannel: IGNORED,
    recheckAccepted: IGNORED,
    recheckRefused: IGNORED,
    reconnect: { status: 'connecting', backoffMs: 800, mismatched: true },
    retire: retiringDown,
    close: closed,
  },
  retiring: inert({ disconnected: retiringDown, close: closed }),
  retiringDown: inert({ close: closed }),
  closed: inert({}),
};

const pairs = Object.entries(table).flatMap(([stateName, row]) =>
  Object.entries(row).map(([eventName, expected]) => ({ stateName, eventName, expected })),
);

describe('ServerConnection state machine', () => {
  it('the table names every state and every event', () => {
    for (const row of Object.values(table))
      expect(Object.keys(row).sort()).toEqual(Object.keys(events).sort());
    expect(Object.keys(table).sort()).toEqual(Object.keys(states).sort());
    expect(pairs).toHaveLength(Object.keys(states).length * Object.keys(events).length);
  });

  it.each(pairs)('$stateName + $eventName', ({ stateName, eventName, expected }) => {
    const state: ConnectionState = states[stateName as keyof typeof states];
    const next = transition(state, events[eventName as keyof typeof events]);
    if (expected === IGNORED) {
      expect(next).toBe(state);
    } else {
      // A different object, even of the same status: the connection enters it (runs its effects).
      expect(next).not.toBe(state);
      expect(next).toEqual(expected);
    }
  });

  it('readiness and connectivity as the snapshot and the retire wait read them', () => {
    const view = Object.fromEntries(
      Object.entries(states).map(([name, s]) => [
        name,
        { connected: isConnected(s), connecting: isConnecting(s) },
      ]),
    );
    expect(view).toEqual({
      connecting: { connected: false, connecting: true },
      connectingMismatched: { connected: false, connecting: false },
      handshaking: { connected: true, connecting: true },
      handshakingMismatched: { connected: true, connecting: false },
      ready: { connected: true, connecting: false },
      unconfirmed: { connected: true, connecting: true },
      mismatched: { connected: true, connecting: false },
      lost: { connected: false, connecting: true },
      lostMismatched: { connected: false, connecting: false },
      retiring: { connected: true, connecting: false },
      retiringDown: { connected: false, connecting: false },
      closed: { connected: false, connecting: false },
    });
  });

  it('the reconnect wait doubles per failed attempt up to its cap, and starts over after a welcome', () => {
    const waits: number[] = [];
    let state = CONNECTING;
    for (let i = 0; i < 8; i++) {
      state = transition(state, events.disconnected);
      if (state.status !== 'lost') throw new Error(`expected lost, got ${state.status}`);
      waits.push(state.delayMs);
      state = transition(state, events.reconnect);
    }
    expect(waits).toEqual([100, 200, 400, 800, 1600, 3200, RECONNECT_MAX_MS, RECONNECT_MAX_MS]);
    state = transition(transition(state, events.connected), events.welcomeUnlisted);
    expect(transition(state, events.disconnected)).toEqual({
      status: 'lost',
      delayMs: RECONNECT_MIN_MS,
      mismatched: false,
    });
  });
});
