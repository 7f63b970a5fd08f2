// A complete nestjs-zlink app in one file: it serves the `billing` channel, calls it through
// ZLinkRouteClient, prints the reply and exits. Run a second copy with BILLING_PEERS pointing at the
// first one's endpoint and calls are shared between both servers by weight.
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ChannelHandler,
  ZLinkContext,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkRuntime,
  type ZLinkMessageContext,
} from 'nestjs-zlink';

interface Charge {
  orderId: string;
  amount: number;
}

interface Receipt {
  orderId: string;
  amount: number;
  tenant: string | undefined;
}

@Injectable()
export class BillingHandlers {
  // A request handler: `billing.charge` on the `billing` channel. It runs through Nest's pipeline,
  // so guards, pipes, interceptors and exception filters apply as they do to a controller.
  @ChannelHandler('billing', 'billing.charge')
  charge(@ZLinkPayload() charge: Charge, @ZLinkContext() ctx: ZLinkMessageContext): Receipt {
    return { orderId: charge.orderId, amount: charge.amount, tenant: ctx.metadata['tenant-id'] };
  }
}

@Injectable()
export class Checkout {
  constructor(private readonly route: ZLinkRouteClient) {}

  // One request to one server of `billing`: it ends with the reply or a ZLinkError, exactly once.
  pay(orderId: string, amount: number, tenant: string): Promise<Receipt> {
    return this.route
      .requestToChannel('billing', 'billing.charge', { orderId, amount })
      .metadata('tenant-id', tenant)
      .async<Receipt>({ timeoutMs: 2000 });
  }
}

@Module({
  imports: [
    ZLinkModule.forRoot({
      clientServer: {
        billing: {
          // This process serves `billing` (port 0 picks a free port) and calls it too; its own server
          // is reached over the real transport, like any other.
          server: { listen: { port: Number(process.env.BILLING_PORT ?? 0) } },
          client: { connect: process.env.BILLING_PEERS?.split(',') ?? [] },
        },
      },
    }),
  ],
  providers: [BillingHandlers, Checkout],
})
export class AppModule {}

async function bootstrap(): Promise<void> {
  // An HTTP app works the same: NestFactory.create(AppModule), then app.listen(3000).
  const app = await NestFactory.createApplicationContext(AppModule);
  app.enableShutdownHooks(); // SIGTERM drains: accepted requests finish before the sockets close
  console.log(`billing listens on ${app.get(ZLinkRuntime).endpoint('billing')}`);

  const receipt = await app.get(Checkout).pay('order-1', 42, 'acme');
  console.log(`receipt ${JSON.stringify(receipt)}`);
  await app.close();
}

void bootstrap();
