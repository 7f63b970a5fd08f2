// Nest's microservice interfaces over ZLink, as docs/coming-from-nest.md shows them: an orders service
// with @MessagePattern and @EventPattern handlers behind the ZLinkServer strategy, a caller through a
// ClientsModule ZLinkClientProxy, and the same handlers sharing ZLinkModule's runtime. The file is
// compiled with the repository (typecheck), not run.
import 'reflect-metadata';
import { Controller, Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  type ClientProxy,
  ClientsModule,
  Ctx,
  EventPattern,
  MessagePattern,
  Payload,
  RpcException,
} from '@nestjs/microservices';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { ZLinkModule, ZLinkRuntime } from 'nestjs-zlink';
import { ZLinkClientProxy, ZLinkRpcContext, ZLinkServer } from 'nestjs-zlink/microservices';

interface PlaceOrder {
  sku: string;
  qty: number;
}
const stock: Record<string, number> = { 'sku-1': 5 };

@Controller()
class OrdersController {
  @MessagePattern({ channel: 'orders', packet: 'orders.place' }) // a request handler
  place(@Payload() order: PlaceOrder, @Ctx() ctx: ZLinkRpcContext) {
    if ((stock[order.sku] ?? 0) < order.qty) {
      // Reaches the caller as ZLinkError RemoteError with this object as `details`.
      throw new RpcException({ code: 'OUT_OF_STOCK', sku: order.sku });
    }
    stock[order.sku] = (stock[order.sku] ?? 0) - order.qty;
    return {
      sku: order.sku,
      qty: order.qty,
      left: stock[order.sku],
      tenant: ctx.getMetadata()?.['tenant-id'],
    };
  }

  @EventPattern({ channel: 'orders', packet: 'orders.shipped' }) // a one-way send
  shipped(@Payload() event: { sku: string }): void {
    console.log(`shipped ${event.sku}`);
  }
}

@Module({ controllers: [OrdersController] })
class OrdersModule {}

// The microservice: the strategy owns its runtime (started in listen(), drained and closed in close()).
export async function serveOrders(): Promise<void> {
  const server = new ZLinkServer({
    clientServer: { orders: { server: { listen: { port: 7400, bindHost: '0.0.0.0' } } } },
  });
  const app = await NestFactory.createMicroservice(OrdersModule, { strategy: server });
  await app.listen();
}

// The caller: a ClientsModule client, injected by name like any Nest ClientProxy.
@Injectable()
export class Checkout {
  constructor(@Inject('ORDERS') private readonly orders: ClientProxy) {}

  place(sku: string, qty: number): Promise<unknown> {
    return firstValueFrom(this.orders.send({ channel: 'orders', packet: 'orders.place' }, { sku, qty }));
  }

  shipped(sku: string): Promise<void> {
    return lastValueFrom(this.orders.emit({ channel: 'orders', packet: 'orders.shipped' }, { sku }), {
      defaultValue: undefined,
    });
  }
}

@Module({
  imports: [
    ClientsModule.register([
      {
        name: 'ORDERS',
        customClass: ZLinkClientProxy,
        options: {
          clientServer: { orders: { client: { connect: ['tcp://orders-1:7400'] } } },
          requestTimeoutMs: 2000,
        },
      },
    ]),
  ],
  providers: [Checkout],
})
export class ShopModule {}

// One runtime for @ChannelHandler and @MessagePattern handlers: ZLinkModule's.
@Module({
  imports: [
    ZLinkModule.forRoot({ clientServer: { orders: { server: { listen: { port: 7400 } } } } }),
    ClientsModule.registerAsync([
      {
        name: 'ORDERS',
        inject: [ZLinkRuntime],
        useFactory: (runtime: ZLinkRuntime) => ({ customClass: ZLinkClientProxy, options: { runtime } }),
      },
    ]),
  ],
  controllers: [OrdersController],
})
export class AppModule {}

export async function standalone(): Promise<void> {
  const app = await NestFactory.createMicroservice(AppModule, ZLinkServer.fromModule());
  await app.listen();
}

export async function hybrid(): Promise<void> {
  const app = await NestFactory.create(AppModule); // an HTTP app with the microservice beside it
  app.connectMicroservice(ZLinkServer.fromModule()); // same as { strategy: new ZLinkServer({ runtime }) }
  await app.startAllMicroservices();
  await app.listen(3000);
}
