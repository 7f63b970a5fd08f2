import { Buffer } from 'node:buffer';
import { STATUS_CODES } from 'node:http';
import type { UpgradeRefusal } from '../../core/observe/index.js';
import type { SessionCloseReason } from '../../core/wire/index.js';

/**
 * The most bytes of an upgrade request's line and headers (Node's `maxHeaderSize`): a browser's
 * upgrade with its cookies is a few KiB; past this the request is answered 431 and the connection
 * closed, so a client sending a megabyte of headers costs the gateway at most this much.
 */
export const MAX_UPGRADE_HEADER_BYTES = 16 * 1024;

/**
 * Fragments of one message: a game client writes a message as one frame (browsers do); a client
 * splitting one into thousands of tiny fragments only makes the gateway hold a buffer per fragment.
 * One more closes the WebSocket (1008).
 */
export const MAX_MESSAGE_FRAGMENTS = 256;

/** What a listener answers a refused upgrade with. */
export interface UpgradeAnswer {
  readonly status: number;
  readonly reason: UpgradeRefusal;
}

/** The upgrades a listener takes: its path, and the Origins it allows (`undefined`: any). */
export interface UpgradeRule {
  readonly path: string;
  /** Lower-cased, as compared. */
  readonly origins: ReadonlySet<string> | undefined;
}

/** `origins` as an `UpgradeRule` compares them: lower case (a browser writes scheme and host so). */
export function upgradeRule(path: string, origins: readonly string[] | undefined): UpgradeRule {
  return { path, origins: origins && new Set(origins.map((o) => o.toLowerCase())) };
}

/**
 * Why an upgrade request is refused before the WebSocket handshake is read, if it is
 * (docs/sessions-wire.md#upgrade-refusals): a method other than GET, a path other than the listener's
 * (the query string aside), an `Origin` header not in the allow-list. A request with no `Origin` is
 * let through: browsers always send one, and the allow-list protects a browser's player from another
 * site's page; a client that is not a browser could write any Origin it likes.
 */
export function upgradeRefusal(
  method: string | undefined,
  url: string | undefined,
  origin: string | undefined,
  rule: UpgradeRule,
): UpgradeAnswer | undefined {
  if (method !== 'GET') return { status: 405, reason: 'method' };
  const target = url ?? '';
  const query = target.indexOf('?');
  if ((query < 0 ? target : target.slice(0, query)) !== rule.path) return { status: 404, reason: 'path' };
  if (rule.origins && origin !== undefined && !rule.origins.has(origin.toLowerCase()))
    return { status: 403, reason: 'origin' };
  return undefined;
}

/**
 * What an HTTP parser's `clientError` is answered with: headers over `MAX_UPGRADE_HEADER_BYTES` 431,
 * a request not finished within the hello timeout 408, any other fault (bytes that are no HTTP) 400.
 * `undefined` for a connection the client already reset: nothing to answer, nothing to count.
 */
export function clientErrorAnswer(code: string | undefined): UpgradeAnswer | undefined {
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'headersTooLarge' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'timeout' };
    default:
      return { status: 400, reason: 'malformed' };
  }
}

/**
 * The whole HTTP response of a refusal: a status line, `Connection: close`, no body but a short text
 * naming the rule. `extra` is more header lines (`Upgrade: websocket` on a 426).
 */
export function refusalResponse(status: number, text: string, extra: readonly string[] = []): string {
  const body = `${text}\n`;
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'Connection: close',
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...extra,
    '',
    body,
  ].join('\r\n');
}

/** A refusal's text: what a person reading the response (or a log) needs to fix the client. */
export function refusalText(reason: UpgradeRefusal, path: string): string {
  switch (reason) {
    case 'path':
      return `no session listener here: connect a WebSocket to ${path}`;
    case 'origin':
      return 'this Origin is not allowed to open a session';
    case 'method':
      return 'a WebSocket upgrade is a GET';
    case 'handshake':
      return 'not a valid WebSocket handshake';
    case 'headersTooLarge':
      return 'request headers too large';
    case 'forwardedFor':
      return "a trusted proxy's X-Forwarded-For could not be read";
    case 'notUpgrade':
      return `a session listener: connect a WebSocket to ${path}`;
    case 'timeout':
      return 'no WebSocket upgrade in time';
    default:
      return 'not an HTTP request';
  }
}

/** WebSocket close codes this listener sends (docs/sessions-wire.md#websocket). */
export const WebSocketClose = {
  normal: 1000,
  goingAway: 1001,
  protocolError: 1002,
  /** A text message: the session wire is binary. */
  unsupportedData: 1003,
  policyViolation: 1008,
  messageTooBig: 1009,
  internalError: 1011,
  tryAgainLater: 1013,
} as const;

const CLOSE_OF: Partial<Record<SessionCloseReason, number>> = {
  normal: WebSocketClose.normal,
  goingAway: WebSocketClose.goingAway,
  protocolError: WebSocketClose.protocolError,
  frameTooLarge: WebSocketClose.messageTooBig,
  serverError: WebSocketClose.internalError,
  full: WebSocketClose.tryAgainLater,
};

/**
 * The WebSocket close code a session's end is sent with, after its session Close frame: the standard
 * code nearest the reason, 1008 (policy violation) for the reasons WebSocket has no code of its own
 * for. The close's reason text is the session reason's name (`idleTimeout`), so a browser's
 * `CloseEvent` says it too.
 */
export function webSocketCloseOf(reason: SessionCloseReason): number {
  return CLOSE_OF[reason] ?? WebSocketClose.policyViolation;
}
