/**
 * An orders microservice in Nest's own style: `@MessagePattern` / `@EventPattern` handlers served by
 * the `ZLinkServer` transport strategy (no ZLinkModule needed: the strategy owns its runtime).
 * Prints one JSON line with its endpoint; ends when its parent does.
 * Usage: node orders-service.js [port]
 */
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import type { ZLinkRuntime } from '../../lib/index.js';
import { ZLinkRpcContext, ZLinkServer } from '../../lib/nest/microservices/index.js';
import { exitWithParent } from '../exit-with-parent.js';

const [port = '0'] = process.argv.slice(2);

interface PlaceOrder {
  sku: string;
  qty: number;
}

const stock: Record<string, number> = { 'sku-apple': 10, 'sku-pear': 0 };

@Controller()
class OrdersController {
  @MessagePattern({ channel: 'orders', packet: 'orders.place' })
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

  @MessagePattern({ channel: 'orders', packet: 'orders.report' })
  async report(@Payload() req: { delayMs: number }) {
    await new Promise((resolve) => setTimeout(resolve, req.delayMs));
    return { stock };
  }

  @EventPattern({ channel: 'orders', packet: 'orders.shipped' })
  shipped(@Payload() event: { sku: string }): void {
    process.stderr.write(`  [orders-service] shipped event for ${event.sku}\n`);
  }
}

@Module({ controllers: [OrdersController] })
class OrdersModule {}

const server = new ZLinkServer({
  clientServer: { orders: { server: { listen: { port: Number(port), bindHost: '127.0.0.1' } } } },
});
const app = await NestFactory.createMicroservice(OrdersModule, { strategy: server, logger: false });
await app.listen();
exitWithParent(app);
process.stdout.write(`${JSON.stringify({ endpoint: server.unwrap<ZLinkRuntime>().endpoint('orders') })}\n`);
