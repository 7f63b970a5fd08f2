import { HttpException } from '@nestjs/common';
import { EmptyError, isObservable, lastValueFrom } from 'rxjs';
import { ZLinkError } from '../core/errors.js';

/**
 * Runs a handler wrapped by Nest (its pipeline included) to the one result a ZLink handler gives: a
 * returned Observable answers with its last value (one reply per request), none meaning "no reply
 * value"; what the pipeline threw goes through `toHandlerFailure`. @internal
 */
export async function oneResult(run: () => unknown): Promise<unknown> {
  try {
    const result: unknown = await run();
    // An exception filter's answer comes back unconverted, usually `throwError(...)`.
    return isObservable(result) ? await lastValueFrom(result, { defaultValue: undefined }) : result;
  } catch (error) {
    // Nest's rpc context turns a returned Observable into its last value and throws EmptyError when
    // there is none: for a handler, completing without a value means "no reply value", not a failure.
    if (error instanceof EmptyError) return undefined;
    throw toHandlerFailure(error);
  }
}

/**
 * A failure whose payload travels to the caller as the error reply's `details` (the runtime sends
 * the `getError()` payload of a thrown error, as it does for Nest's `RpcException`). @internal
 */
export class ZLinkHandlerFailure extends Error {
  override readonly name = 'ZLinkHandlerFailure';

  constructor(
    message: string,
    private readonly payload: unknown,
    cause: unknown,
  ) {
    super(message, { cause });
  }

  getError(): unknown {
    return this.payload;
  }
}

/**
 * Turns what Nest's pipeline threw into something the runtime can put on the wire without losing
 * it: a `ZLinkError` keeps its code and an `RpcException` its payload (the runtime handles both);
 * an `HttpException` (a `ValidationPipe` failure, a guard's `ForbiddenException`) sends its
 * response body (`{ statusCode, message, error }`) as details, and its messages in the error's
 * message (`Bad Request: amount must be an integer number`, not Nest's `Bad Request Exception`); a
 * thrown non-`Error` object (what an rpc exception filter's `throwError(() => ({ status, message }))`
 * produces) travels as details. Every kind of handler's failure goes through here (channel, object
 * and session handlers, `ZLinkServer`'s); the wire form is bounded by `toWireError`.
 * @internal
 */
export function toHandlerFailure(error: unknown): unknown {
  if (error instanceof ZLinkError || hasGetError(error)) return error;
  if (error instanceof HttpException)
    return new ZLinkHandlerFailure(httpMessage(error), error.getResponse(), error);
  if (error instanceof Error) return error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as { message?: unknown }).message;
    return new ZLinkHandlerFailure(typeof message === 'string' ? message : 'handler error', error, error);
  }
  return error;
}

/** An HttpException's message with what its body says: `ValidationPipe` lists every violation there. */
function httpMessage(error: HttpException): string {
  const body = error.getResponse() as { message?: unknown; error?: unknown } | string;
  const messages = typeof body === 'object' && body !== null ? body.message : undefined;
  if (!Array.isArray(messages) || messages.length === 0) return error.message;
  const title =
    typeof (body as { error?: unknown }).error === 'string'
      ? (body as { error: string }).error
      : error.message;
  return `${title}: ${messages.map(String).join('; ')}`;
}

function hasGetError(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { getError?: unknown }).getError === 'function'
  );
}
