import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  type CallHandler,
  type CanActivate,
  Catch,
  type ExecutionContext,
  type INestApplicationContext,
  Injectable,
  type NestInterceptor,
  type RpcExceptionFilter,
  UseFilters,
  UseGuards,
  UseInterceptors,
  ParseIntPipe,
  UsePipes,
  ValidationPipe,
} from '@nestjs/common';
import { APP_GUARD, APP_PIPE } from '@nestjs/core';
import { Payload, RpcException } from '@nestjs/microservices';
import { IsInt, IsString, Min } from 'class-validator';
import { type Observable, map, of, throwError } from 'rxjs';
import {
  ChannelHandler,
  type ZLinkMessageContext,
  ZLinkError,
  ZLinkPayload,
  ZLinkRouteClient,
} from '../../../lib/index.js';
import { bootApp, rejectionOf } from './nest-app.js';

class ChargeDto {
  @IsString() orderId!: string;
  @IsInt() @Min(1) amount!: number;
}

class CardDeclined extends Error {}

@Injectable()
class TenantGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const ctx = context.switchToRpc().getContext<ZLinkMessageContext>();
    return context.getType() === 'rpc' && ctx.metadata['tenant-id'] !== undefined;
  }
}

class WrapInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((result) => ({ wrapped: result })));
  }
}

@Catch(CardDeclined)
class DeclinedFilter implements RpcExceptionFilter<CardDeclined> {
  catch(exception: CardDeclined): Observable<never> {
    return throwError(() => ({ status: 'error', message: `payment refused: ${exception.message}` }));
  }
}

@Catch(RangeError)
class FallbackFilter implements RpcExceptionFilter<RangeError> {
  catch(): Observable<unknown> {
    return of({ fallback: true });
  }
}

@Injectable()
class PaymentHandlers {
  @ChannelHandler('billing', 'pay.validated')
  validated(@ZLinkPayload(new ValidationPipe()) dto: ChargeDto): { ok: boolean; orderId: string } {
    return { ok: true, orderId: dto.orderId };
  }

  @ChannelHandler('billing', 'pay.transformed')
  @UsePipes(new ValidationPipe({ transform: true }))
  transformed(@Payload() dto: ChargeDto): boolean {
    return dto instanceof ChargeDto;
  }

  @ChannelHandler('billing', 'pay.guarded')
  @UseGuards(TenantGuard)
  guarded(): string {
    return 'allowed';
  }

  @ChannelHandler('billing', 'pay.wrapped')
  @UseInterceptors(WrapInterceptor)
  wrapped(@ZLinkPayload('n', ParseIntPipe) n: number): number {
    return n + 1;
  }

  @ChannelHandler('billing', 'pay.declined')
  @UseFilters(DeclinedFilter)
  declined(): never {
    throw new CardDeclined('insufficient funds');
  }

  @ChannelHandler('billing', 'pay.fallback')
  @UseFilters(FallbackFilter)
  fallback(): never {
    throw new RangeError('out of range');
  }

  @ChannelHandler('billing', 'pay.rpc')
  rpc(): never {
    throw new RpcException({ reason: 'card_declined', message: 'card declined by issuer' });
  }

  @ChannelHandler('billing', 'pay.plain')
  async plain(): Promise<never> {
    await Promise.resolve();
    throw new Error('ledger unavailable');
  }

  @ChannelHandler('billing', 'pay.zlink')
  zlink(): never {
    throw new ZLinkError('InvalidArgument', 'amount: must be positive');
  }
}

describe('ZLinkModule handlers run through the Nest pipeline', () => {
  let app: INestApplicationContext | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const boot = async (): Promise<ZLinkRouteClient> => {
    app = await bootApp({ providers: [PaymentHandlers] });
    return app.get(ZLinkRouteClient);
  };

  it('ValidationPipe accepts a good DTO and rejects a bad one with a RemoteError carrying the violations', async () => {
    const route = await boot();
    await expect(
      route.requestToChannel('billing', 'pay.validated', { orderId: 'o-1', amount: 5 }).async(),
    ).resolves.toEqual({ ok: true, orderId: 'o-1' });
    const error = await rejectionOf(() =>
      route.requestToChannel('billing', 'pay.validated', { orderId: 7, amount: 0 }).async(),
    );
    expect(error).toBeInstanceOf(ZLinkError);
    expect(error.code).toBe('RemoteError');
    expect(error.remote.code).toBe('HandlerError');
    expect(error.remote.details).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(error.remote.details.message).toEqual(
      expect.arrayContaining(['orderId must be a string', 'amount must not be less than 1']),
    );
  });

  it('@UsePipes(ValidationPipe({ transform })) hands the handler a DTO instance', async () => {
    const route = await boot();
    await expect(
      route.requestToChannel('billing', 'pay.transformed', { orderId: 'o-2', amount: 3 }).async(),
    ).resolves.toBe(true);
  });

  it('a guard that returns false ends the request with a RemoteError (Forbidden), not a hang', async () => {
    const route = await boot();
    const error = await rejectionOf(() => route.requestToChannel('billing', 'pay.guarded', {}).async());
    expect(error.code).toBe('RemoteError');
    expect(error.remote).toMatchObject({
      code: 'HandlerError',
      message: 'Forbidden resource',
      details: { statusCode: 403 },
    });
    await expect(
      route.requestToChannel('billing', 'pay.guarded', {}).metadata('tenant-id', 'acme').async(),
    ).resolves.toBe('allowed');
  });

  it('an interceptor maps the result (after a class pipe parsed the argument)', async () => {
    const route = await boot();
    await expect(route.requestToChannel('billing', 'pay.wrapped', { n: '1' }).async()).resolves.toEqual({
      wrapped: 2,
    });
  });

  it('an exception filter transforms the error; its throwError() reaches the caller as details', async () => {
    const route = await boot();
    const error = await rejectionOf(() => route.requestToChannel('billing', 'pay.declined', {}).async());
    expect(error.code).toBe('RemoteError');
    expect(error.remote).toMatchObject({
      code: 'HandlerError',
      message: 'payment refused: insufficient funds',
      details: { status: 'error', message: 'payment refused: insufficient funds' },
    });
  });

  it('an exception filter that answers with a value turns the failure into a reply', async () => {
    const route = await boot();
    await expect(route.requestToChannel('billing', 'pay.fallback', {}).async()).resolves.toEqual({
      fallback: true,
    });
  });

  it('an RpcException payload reaches the caller in error.details', async () => {
    const route = await boot();
    const error = await rejectionOf(() => route.requestToChannel('billing', 'pay.rpc', {}).async());
    expect(error.code).toBe('RemoteError');
    expect(error.details).toEqual({ reason: 'card_declined', message: 'card declined by issuer' });
    expect(error.remote.message).toBe('card declined by issuer');
  });

  it('a plain Error is a HandlerError with its message; a ZLinkError keeps its code', async () => {
    const route = await boot();
    const plain = await rejectionOf(() => route.requestToChannel('billing', 'pay.plain', {}).async());
    expect(plain.remote).toMatchObject({ code: 'HandlerError', message: 'ledger unavailable' });
    const coded = await rejectionOf(() => route.requestToChannel('billing', 'pay.zlink', {}).async());
    expect(coded.remote).toMatchObject({ code: 'InvalidArgument', message: 'amount: must be positive' });
  });
});

@Injectable()
class PlainHandlers {
  @ChannelHandler('billing', 'plain.charge')
  charge(@ZLinkPayload() req: ChargeDto): ChargeDto {
    return req;
  }
}

@UseGuards(TenantGuard)
@Injectable()
class GuardedClass {
  @ChannelHandler('billing', 'guarded.class')
  charge(): string {
    return 'charged';
  }
}

describe('global and class-level enhancers apply to handlers that declare none themselves', () => {
  let app: INestApplicationContext | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('an APP_PIPE ValidationPipe validates a handler with no pipe of its own', async () => {
    app = await bootApp({
      providers: [PlainHandlers, { provide: APP_PIPE, useValue: new ValidationPipe() }],
    });
    const route = app.get(ZLinkRouteClient);
    await expect(
      route.requestToChannel('billing', 'plain.charge', { orderId: 'o-1', amount: 5 }).async(),
    ).resolves.toEqual({ orderId: 'o-1', amount: 5 });
    const error = await rejectionOf(() =>
      route.requestToChannel('billing', 'plain.charge', { orderId: 7, amount: 0 }).async(),
    );
    expect(error).toMatchObject({ code: 'RemoteError' });
    expect(error.details).toMatchObject({ statusCode: 400 });
  });

  it('an APP_GUARD refuses a handler with no guard of its own', async () => {
    app = await bootApp({ providers: [PlainHandlers, { provide: APP_GUARD, useClass: TenantGuard }] });
    const error = await rejectionOf(() =>
      app!
        .get(ZLinkRouteClient)
        .requestToChannel('billing', 'plain.charge', { orderId: 'o', amount: 1 })
        .async(),
    );
    expect(error).toMatchObject({ code: 'RemoteError' });
    expect(error.message).toContain('Forbidden');
  });

  it('a class-level guard applies to the class’s handlers', async () => {
    app = await bootApp({ providers: [GuardedClass] });
    const route = app.get(ZLinkRouteClient);
    await expect(
      rejectionOf(() => route.requestToChannel('billing', 'guarded.class', {}).async()),
    ).resolves.toMatchObject({
      code: 'RemoteError',
    });
    await expect(
      route.requestToChannel('billing', 'guarded.class', {}).metadata('tenant-id', 't').async(),
    ).resolves.toBe('charged');
  });
});
