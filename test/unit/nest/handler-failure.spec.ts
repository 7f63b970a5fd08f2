/**
 * One result per handler call, and a failure the caller can read: what a Nest-wrapped handler
 * returned or threw becomes the reply (the last value of an Observable) or an error whose code,
 * message and details survive the trip. Every kind of handler goes through these two functions.
 */
import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { BadRequestException, ForbiddenException } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { EMPTY, EmptyError, of, throwError } from 'rxjs';
import { ZLinkError } from '../../../lib/core/errors.js';
import { ZLinkHandlerFailure, oneResult, toHandlerFailure } from '../../../lib/nest/handler-failure.js';

describe('oneResult', () => {
  it('a value, a promise or an Observable answers with one value: the last one', async () => {
    expect(await oneResult(() => 7)).toBe(7);
    expect(await oneResult(async () => 'done')).toBe('done');
    expect(await oneResult(() => of(1, 2, 3))).toBe(3);
  });

  it('an Observable that completes without a value is "no reply value", not a failure', async () => {
    expect(await oneResult(() => EMPTY)).toBeUndefined();
    // Nest's rpc context takes the last value itself and throws EmptyError when there is none.
    expect(
      await oneResult(() => {
        throw new EmptyError();
      }),
    ).toBeUndefined();
  });

  it("what the pipeline threw, or an exception filter's throwError, comes out as a handler failure", async () => {
    const thrown = await oneResult(() => {
      throw new ForbiddenException();
    }).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(ZLinkHandlerFailure);
    const filtered = await oneResult(() => throwError(() => ({ status: 'error', message: 'nope' }))).catch(
      (e: unknown) => e,
    );
    expect(filtered).toMatchObject({ message: 'nope' });
    expect((filtered as ZLinkHandlerFailure).getError()).toEqual({ status: 'error', message: 'nope' });
  });
});

describe('toHandlerFailure', () => {
  it('a ZLinkError keeps its code and an RpcException its payload: both are passed on as they are', () => {
    const zlink = new ZLinkError('InvalidArgument', 'bad');
    const rpc = new RpcException({ code: 'E42' });
    expect(toHandlerFailure(zlink)).toBe(zlink);
    expect(toHandlerFailure(rpc)).toBe(rpc);
  });

  it("a ValidationPipe's BadRequest lists every violation in the message and sends its body as details", () => {
    const error = new BadRequestException(['amount must be an integer number', 'id should not be empty']);
    const failure = toHandlerFailure(error) as ZLinkHandlerFailure;
    expect(failure).toBeInstanceOf(ZLinkHandlerFailure);
    expect(failure.message).toBe('Bad Request: amount must be an integer number; id should not be empty');
    expect(failure.getError()).toEqual(error.getResponse());
    expect(failure.cause).toBe(error);
  });

  it("an HttpException without a list keeps Nest's message, its body still the details", () => {
    const error = new ForbiddenException();
    const failure = toHandlerFailure(error) as ZLinkHandlerFailure;
    expect(failure.message).toBe(error.message);
    expect(failure.getError()).toEqual(error.getResponse());
    expect(failure.getError()).toMatchObject({ statusCode: 403 });
  });

  it('a plain Error is passed on; a thrown object travels as details, with its message when it has one', () => {
    const plain = new TypeError('boom');
    expect(toHandlerFailure(plain)).toBe(plain);
    const withMessage = toHandlerFailure({ status: 409, message: 'taken' }) as ZLinkHandlerFailure;
    expect([withMessage.message, withMessage.getError()]).toEqual([
      'taken',
      { status: 409, message: 'taken' },
    ]);
    const without = toHandlerFailure({ status: 500 }) as ZLinkHandlerFailure;
    expect([without.message, without.getError()]).toEqual(['handler error', { status: 500 }]);
  });

  it('a thrown primitive is left as it is (the runtime words it)', () => {
    expect(toHandlerFailure('oops')).toBe('oops');
    expect(toHandlerFailure(undefined)).toBeUndefined();
  });
});
