import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, type INestApplicationContext, Injectable } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { EMPTY, type Observable, of } from 'rxjs';
import {
  ChannelHandler,
  type ZLinkMessageContext,
  ZLinkContext,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkRuntime,
} from '../../../lib/index.js';
import { bootApp, deferred } from './nest-app.js';

let sent = deferred<{ payload: unknown; ctx: ZLinkMessageContext }>(0);

@Injectable()
class BillingHandlers {
  @ChannelHandler('billing', 'billing.charge')
  charge(req: { amount: number }, ctx: ZLinkMessageContext): { charged: number; packet: string } {
    return { charged: req.amount * 2, packet: ctx.packet };
  }

  @ChannelHandler('billing', 'billing.audit', { kind: 'send' })
  audit(@ZLinkPayload() payload: unknown, @ZLinkContext() ctx: ZLinkMessageContext): void {
    sent.resolve({ payload, ctx });
  }

  @ChannelHandler('billing', 'billing.context')
  context(@ZLinkContext() ctx: ZLinkMessageContext): {
    frozen: boolean;
    tenant: string | undefined;
    kind: string;
    channel: string;
    mutated: boolean;
  } {
    let mutated = true;
    try {
      (ctx.metadata as Record<string, string>)['tenant-id'] = 'changed';
    } catch {
      mutated = false;
    }
    return {
      frozen: Object.isFrozen(ctx.metadata),
      tenant: ctx.metadata['tenant-id'],
      kind: ctx.kind,
      channel: ctx.channelName,
      mutated,
    };
  }

  @ChannelHandler('billing', 'billing.amount')
  amount(@ZLinkPayload('amount') amount: number): number {
    return amount + 1;
  }

  @ChannelHandler('billing', 'billing.observable')
  observable(@ZLinkPayload() req: { n: number }): Observable<number> {
    return req.n > 0 ? of(req.n, req.n * 2) : EMPTY;
  }

  @ChannelHandler('billing', 'billing.async')
  async later(@ZLinkPayload() req: { n: number }): Promise<number> {
    await new Promise((resolve) => setImmediate(resolve));
    return req.n * 10;
  }
}

@Controller()
class LedgerController {
  @ChannelHandler('billing', 'ledger.balance')
  balance(
    @Payload() req: { account: string },
    @Ctx() ctx: ZLinkMessageContext,
  ): { account: string; correlated: boolean } {
    return { account: req.account, correlated: typeof ctx.correlation === 'number' };
  }

  @ChannelHandler('billing', 'ledger.owner')
  owner(@Payload('account') account: string): string {
    return `owner of ${account}`;
  }
}

describe('ZLinkModule channel handlers', () => {
  let app: INestApplicationContext | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const boot = async (): Promise<ZLinkRouteClient> => {
    app = await bootApp({ providers: [BillingHandlers], controllers: [LedgerController] });
    return app.get(ZLinkRouteClient);
  };

  it('an Observable handler replies with its last value; one that completes empty replies undefined', async () => {
    const route = await boot();
    await expect(route.requestToChannel('billing', 'billing.observable', { n: 3 }).async()).resolves.toBe(6);
    await expect(
      route.requestToChannel('billing', 'billing.observable', { n: 0 }).async(),
    ).resolves.toBeUndefined();
  });

  it('a request handler on a provider answers the caller', async () => {
    const route = await boot();
    const reply = await route.requestToChannel('billing', 'billing.charge', { amount: 21 }).async();
    expect(reply).toEqual({ charged: 42, packet: 'billing.charge' });
  });

  it('a request handler on a controller answers, with @Payload() and @Ctx() from @nestjs/microservices', async () => {
    const route = await boot();
    await expect(
      route.requestToChannel('billing', 'ledger.balance', { account: 'acc-1' }).async(),
    ).resolves.toEqual({
      account: 'acc-1',
      correlated: true,
    });
    await expect(
      route.requestToChannel('billing', 'ledger.owner', { account: 'acc-2' }).async(),
    ).resolves.toBe('owner of acc-2');
  });

  it('a send handler receives the one-way message and its context', async () => {
    sent = deferred();
    const route = await boot();
    await route.sendToChannel('billing', 'billing.audit', { event: 'paid' }).metadata('trace', 't-1').async();
    const { payload, ctx } = await sent.promise;
    expect(payload).toEqual({ event: 'paid' });
    expect(ctx).toMatchObject({
      channelName: 'billing',
      kind: 'send',
      packet: 'billing.audit',
      correlation: undefined,
    });
    expect(ctx.metadata['trace']).toBe('t-1');
  });

  it('metadata reaches the handler as a frozen snapshot', async () => {
    const route = await boot();
    const reply = await route
      .requestToChannel('billing', 'billing.context', {})
      .metadata('tenant-id', 'acme')
      .async();
    expect(reply).toEqual({
      frozen: true,
      tenant: 'acme',
      kind: 'request',
      channel: 'billing',
      mutated: false,
    });
  });

  it('@ZLinkPayload(property) picks one property; an async handler resolves', async () => {
    const route = await boot();
    await expect(route.requestToChannel('billing', 'billing.amount', { amount: 4 }).async()).resolves.toBe(5);
    await expect(route.requestToChannel('billing', 'billing.async', { n: 3 }).async()).resolves.toBe(30);
  });

  it('ZLinkRuntime and ZLinkRouteClient are injectable and the route client is the runtime’s', async () => {
    const route = await boot();
    const runtime = app!.get(ZLinkRuntime);
    expect(runtime.routeClient).toBe(route);
    expect(runtime.endpoint('billing')).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
  });
});
