import { closeReasonOf, packr } from '../core/session-wire/index.js';
import type { SessionClientClose, SessionWelcome } from './session-api.js';

/**
 * Reading what a server sends a client (docs/sessions-wire.md#bodies), and the ends a client reports,
 * for the protocol (`session-machine.ts`). No Node built-in here: this runs in browsers.
 */

/** A frame body as its items, or what is wrong with it (not msgpack, not an array). */
export function readServerFrame(body: Uint8Array): unknown[] | string {
  let items: unknown;
  try {
    items = packr.unpack(body);
  } catch (error) {
    return `server frame: malformed msgpack (${(error as Error).message})`;
  }
  return Array.isArray(items) ? items : 'server frame: not a msgpack array';
}

/**
 * A Welcome `[2, version, sessionId, heartbeatMs, maxFrameBytes, maxInFlight, resumeToken?,
 * resumeGraceMs?, received?]`: the session it opens, and its resume terms when it offers resume (a
 * token and a positive grace).
 */
export function readWelcome(v: readonly unknown[]): {
  readonly welcome: SessionWelcome;
  readonly resume:
    { readonly token: string; readonly graceMs: number; readonly received: unknown } | undefined;
} {
  const [token, graceMs, received] = [v[6], v[7], v[8]];
  const resume =
    typeof token === 'string' && typeof graceMs === 'number' && graceMs > 0
      ? { token, graceMs, received }
      : undefined;
  const welcome: SessionWelcome = {
    sessionId: v[2] as string,
    heartbeatMs: v[3] as number,
    maxFrameBytes: v[4] as number,
    maxInFlight: v[5] as number,
    ...(resume && { resumeGraceMs: resume.graceMs }),
  };
  return { welcome, resume };
}

/** The end a Close frame `[10, code, reason]` from the server says (`lost` for a code not known here). */
export function serverClose(v: readonly unknown[]): SessionClientClose {
  const code = v[1] as number;
  return { reason: closeReasonOf(code) ?? 'lost', code, detail: String(v[2] ?? ''), by: 'server' };
}

/** An end with no Close frame: the connection's (`lost`, `protocolError`, `resumeExpired`). */
export function connectionEnd(reason: SessionClientClose['reason'], detail: string): SessionClientClose {
  return { reason, code: undefined, detail, by: 'connection' };
}
