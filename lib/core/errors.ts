import { boundedDetails } from './error-details.js';

export { MAX_ERROR_DETAILS_BYTES } from './error-details.js';

/**
 * The one home of ZLink error codes and their wire form. Transport-library errors never
 * reach a caller raw: every public call ends with a `ZLinkError` carrying one of these codes.
 */
export const ZLINK_ERROR_CODES = [
  'NotFound',
  'NotConfigured',
  'Unavailable',
  'Timeout',
  'Cancelled',
  'RouteError',
  'RemoteError',
  'ProtocolError',
  'InvalidArgument',
  'Rejected',
  'Shutdown',
  'Configuration',
  /**
   * The operation can never succeed as asked, however often it is retried: a ref whose ObjectGeneration
   * is not the object's current one, or a request from an object to itself (its own turn would wait for
   * itself). Refused at once; nothing ran.
   */
  'InvalidOperation',
] as const;

export type ZLinkErrorCode = (typeof ZLINK_ERROR_CODES)[number];

/** What a server tells a caller when a request fails on its side (the body of an error reply). */
export interface WireError {
  /** A ZLink code (`Rejected`, `InvalidArgument`, ...) or a remote-only code such as `NoHandler`. */
  readonly code: string;
  readonly message: string;
  readonly details?: unknown;
}

/** Codes that only a server produces about a request it received; they arrive as `RemoteError`. */
export const REMOTE_CODES = {
  noHandler: 'NoHandler',
  decodeError: 'DecodeError',
  handlerError: 'HandlerError',
  badMetadata: 'BadMetadata',
  /**
   * A persistent object's turn ran, but the State Store did not take its state (docs/objects.md): the
   * reply is withheld, and the turn's effect may or may not be kept.
   */
  stateNotSaved: 'StateNotSaved',
  /** A persistent object's turn ran on an owner another one replaced in the State Store: not kept. */
  stateFenced: 'StateFenced',
} as const;

/**
 * The wire code of a listener's own refusal while it drains. It is not `Rejected`: a handler may
 * itself throw `ZLinkError('Rejected')` after doing work, and the caller must not take that for
 * "never ran".
 */
export const DRAINING_CODE = 'ServerDraining';
/**
 * The wire code of a refusal by a server whose owner lease is fenced
 * (docs/protocol.md#owner-lease-and-fencing): it never ran either.
 */
export const FENCED_CODE = 'ServerFenced';

export interface ZLinkErrorOptions {
  cause?: unknown;
  details?: unknown;
  /** For `RemoteError`: what the remote side reported. */
  remote?: WireError;
}

export class ZLinkError extends Error {
  override readonly name = 'ZLinkError';
  readonly code: ZLinkErrorCode;
  readonly details?: unknown;
  /** Set on `RemoteError` (the remote code, message and details) and on `Rejected` from a server. */
  readonly remote?: WireError;

  constructor(code: ZLinkErrorCode, message: string, options: ZLinkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.details !== undefined) this.details = options.details;
    if (options.remote !== undefined) this.remote = options.remote;
  }

  /** The code a remote caller should see: the remote code for a relayed `RemoteError`. */
  get remoteCode(): string | undefined {
    return this.remote?.code;
  }
}

export function isZLinkError(value: unknown, code?: ZLinkErrorCode): value is ZLinkError {
  return value instanceof ZLinkError && (code === undefined || value.code === code);
}

/** The longest error `message` any wire carries (characters); a longer one is cut, ending in `…`. */
export const MAX_ERROR_MESSAGE_CHARS = 1024;
/**
 * The wire form of a failure raised by a handler (the one place every kind of handler's failure is
 * put on a wire: channel, object and session). A `ZLinkError` keeps its code; anything else is
 * `HandlerError`. An error may carry a `getError()` payload (Nest's `RpcException`, or an
 * `HttpException`'s body: see lib/nest's `toHandlerFailure`), which travels as details so the caller
 * can read it. Message and details are bounded (`MAX_ERROR_MESSAGE_CHARS`, `MAX_ERROR_DETAILS_BYTES`),
 * the details sent as plain data; details that cannot be encoded (a cycle, a symbol) are left out and
 * the message ends saying so, as the wire encoders say it.
 */
export function toWireError(error: unknown): WireError {
  const wire = unboundedWireError(error);
  const { details, note } = boundedDetails(wire.details);
  if (note !== undefined) {
    const tail = ` (details could not be encoded: ${note})`;
    return {
      code: wire.code,
      message: boundedMessage(wire.message, MAX_ERROR_MESSAGE_CHARS - tail.length) + tail,
    };
  }
  const message = boundedMessage(wire.message);
  return details === undefined ? { code: wire.code, message } : { code: wire.code, message, details };
}

function unboundedWireError(error: unknown): WireError {
  if (error instanceof ZLinkError) {
    const remote = error.remote;
    if (error.code === 'RemoteError' && remote) return remote;
    return error.details === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, details: error.details };
  }
  const rpcPayload = rpcExceptionPayload(error);
  if (rpcPayload !== undefined) {
    const message =
      typeof rpcPayload === 'string'
        ? rpcPayload
        : typeof (rpcPayload as { message?: unknown }).message === 'string'
          ? (rpcPayload as { message: string }).message
          : error instanceof Error && error.message.length > 0
            ? error.message
            : 'handler error';
    return { code: REMOTE_CODES.handlerError, message, details: rpcPayload };
  }
  return { code: REMOTE_CODES.handlerError, message: errorMessage(error) };
}

/**
 * `message` in at most `max` characters, cut on a code point (never half a surrogate pair), ending in `…`.
 */
function boundedMessage(message: string, max = MAX_ERROR_MESSAGE_CHARS): string {
  if (message.length <= max) return message;
  let end = max - 1;
  // A high surrogate at the cut would leave half a character: the cut moves before it.
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${message.slice(0, end)}…`;
}

function rpcExceptionPayload(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return undefined;
  const getError = (error as { getError?: unknown }).getError;
  if (typeof getError !== 'function') return undefined;
  try {
    return (getError as () => unknown).call(error);
  } catch {
    return undefined; // a broken getError() must not cost the caller its error reply
  }
}

/**
 * Rebuilds a remote failure on the caller's side. A draining or fenced server's refusal (`ServerDraining`,
 * `ServerFenced`) becomes `Rejected` (docs/protocol.md#drain: the request never ran); everything else is
 * `RemoteError` carrying the remote code — including a `Rejected` a handler threw itself. `cause`: the error
 * itself, when it was thrown in this process (see `userCodeError`).
 */
export function fromWireError(wire: WireError, where: string, cause?: unknown): ZLinkError {
  if (wire.code === DRAINING_CODE || wire.code === FENCED_CODE) {
    return new ZLinkError('Rejected', `${where}: ${wire.message}`, { remote: wire, cause });
  }
  return new ZLinkError('RemoteError', `${where}: ${wire.code}: ${wire.message}`, {
    remote: wire,
    details: wire.details,
    cause,
  });
}

/**
 * What user code (an object class's construction, `onActivate`) threw, as its caller sees it
 * wherever that code ran: what a peer's answer would be (`toWireError`, then `fromWireError`), so a
 * `ZLinkError('NotFound')` thrown there is `RemoteError` with `remote.code: 'NotFound'`, never the
 * framework's `NotFound`. The error itself is the cause.
 */
export function userCodeError(error: unknown, where: string): ZLinkError {
  return fromWireError(toWireError(error), where, error);
}

/**
 * The wire code of an object owner's own refusal (the message never ran): the code the caller ends the
 * call with is the value. A handler's own `ZLinkError` travels under its code and arrives as
 * `RemoteError`, so it is never mistaken for one of these.
 */
export const OBJECT_REFUSALS = {
  /** The route the call carried is not the owner's current one (or the object is not here): `Unavailable`. */
  ObjectStale: 'Unavailable',
  /** The object was deactivated, or sealed, before the message's turn: `Unavailable`. */
  ObjectClosed: 'Unavailable',
  /** The owner lease is fenced, or the object queue is full: `Rejected`. */
  ObjectRefused: 'Rejected',
  /** The type is not hosted there, or the object does not exist (destroy, create): `NotFound`. */
  ObjectNotFound: 'NotFound',
  /** A stale ref, an id taken by another type, a create of an id that exists: `InvalidOperation`. */
  ObjectInvalid: 'InvalidOperation',
} as const satisfies Record<string, ZLinkErrorCode>;

export type ObjectRefusalCode = keyof typeof OBJECT_REFUSALS;

/** The wire form of a refusal raised by the object layer (`ZLinkError` with one of the refusal codes). */
export function toObjectWireError(error: unknown): WireError {
  if (error instanceof ZLinkError && error.remote === undefined) {
    const code = objectRefusalCode(error.code);
    if (code !== undefined)
      return error.details === undefined
        ? { code, message: error.message }
        : { code, message: error.message, details: error.details };
  }
  return toWireError(error);
}

function objectRefusalCode(code: ZLinkErrorCode): ObjectRefusalCode | undefined {
  switch (code) {
    case 'Unavailable':
      return 'ObjectClosed';
    case 'Rejected':
      return 'ObjectRefused';
    case 'NotFound':
      return 'ObjectNotFound';
    case 'InvalidOperation':
      return 'ObjectInvalid';
    default:
      return undefined;
  }
}

/**
 * An object call's remote failure on the caller's side: a refusal keeps its local code, the rest is as
 * `fromWireError`.
 */
export function fromObjectWireError(wire: WireError, where: string): ZLinkError {
  const code = (OBJECT_REFUSALS as Record<string, ZLinkErrorCode | undefined>)[wire.code];
  if (code === undefined) return fromWireError(wire, where);
  // An owner names the operation itself when it is the caller's own (a creation asked of it).
  const message = wire.message.startsWith(`${where}: `) ? wire.message : `${where}: ${wire.message}`;
  return new ZLinkError(code, message, { remote: wire, details: wire.details });
}

/** The `Cancelled` terminal of a call whose `AbortSignal` fired; keeps the abort reason as cause. */
export function cancelledError(what: string, signal?: AbortSignal): ZLinkError {
  return new ZLinkError('Cancelled', `${what}: cancelled`, { cause: signal?.reason });
}

export function configurationError(field: string, problem: string): ZLinkError {
  return new ZLinkError('Configuration', `${field}: ${problem}`, { details: { field } });
}

export function invalidArgument(what: string, problem: string): ZLinkError {
  return new ZLinkError('InvalidArgument', `${what}: ${problem}`, { details: { argument: what } });
}

/**
 * A duration in ms given at run time (a setter's argument): `ms` when an integer >= 0, else `InvalidArgument`
 * naming `what`.
 */
export function runtimeMs(what: string, ms: number): number {
  if (!Number.isSafeInteger(ms) || ms < 0) throw invalidArgument(what, 'must be an integer >= 0');
  return ms;
}

/** A message for anything thrown; never throws itself (a hostile `toString` included). */
export function errorMessage(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'unprintable error';
  }
}
