/**
 * The numbers of the end-user session wire (docs/sessions-wire.md): the protocol version, the frame
 * kinds and the close codes. The layout of each frame, and the server's reader and writers, are in
 * `lib/core/wire/session-frames.ts`.
 */

/** The session protocol this version speaks (the Hello's `version`). */
export const SESSION_PROTOCOL_VERSION = 1;

export const SessionFrameKind = {
  Hello: 1,
  Welcome: 2,
  Request: 3,
  Reply: 4,
  Error: 5,
  Send: 6,
  Push: 7,
  Ping: 8,
  Pong: 9,
  Close: 10,
  Ack: 11,
} as const;

/**
 * Why a session ended, as the Close frame carries it (after WebSocket's numbering: 1000 normal, 1001
 * going away, the rest ours). The same names appear in events, metrics and `onSessionClose`.
 */
export const SessionCloseCode = {
  /** The client or the application closed it. */
  normal: 1000,
  /** The server is draining or shutting down. */
  goingAway: 1001,
  /** Malformed framing or msgpack, an unknown kind, a frame out of place (before Hello, a second Hello). */
  protocolError: 1002,
  /** A frame longer than the listener's `maxFrameBytes`. */
  frameTooLarge: 1003,
  /** No Hello within the listener's `helloTimeoutMs`. */
  helloTimeout: 1004,
  /** A Hello with a protocol version this server does not speak. */
  unsupportedVersion: 1005,
  /** `@OnSessionOpen` refused the session (a bad token, say). */
  refused: 1006,
  /** More requests and messages waiting than the listener's `maxInFlight`. */
  tooManyInFlight: 1007,
  /** Nothing heard for the listener's `idleTimeoutMs`: no whole frame, no frame arriving at a usable rate. */
  idleTimeout: 1008,
  /** The client read its pushes and replies too slowly: more than `maxPendingBytes` waited for it. */
  slowConsumer: 1009,
  /** A bound Actor's move did not give the session its new route within `sealTimeoutMs`. */
  relocationTimeout: 1010,
  /** The server failed (an `@OnSessionOpen` that threw, say). */
  serverError: 1011,
  /** The listener holds `maxSessions` sessions already. */
  full: 1012,
  /** A dropped session's client did not resume it within the listener's `resumeGraceMs`. */
  resumeExpired: 1013,
  /** A Hello asked to resume a session it cannot: unknown, expired, or a wrong or used token. */
  resumeRefused: 1014,
} as const;

export type SessionCloseReason = keyof typeof SessionCloseCode;

const REASON_BY_CODE = new Map<number, SessionCloseReason>(
  Object.entries(SessionCloseCode).map(([reason, code]) => [code, reason as SessionCloseReason]),
);

/** The name of a Close frame's code, `undefined` for a code this version does not know. */
export function closeReasonOf(code: number): SessionCloseReason | undefined {
  return REASON_BY_CODE.get(code);
}

/** The largest correlation a client may use: a uint32, never 0. */
export const MAX_SESSION_CORRELATION = 0xffffffff;
