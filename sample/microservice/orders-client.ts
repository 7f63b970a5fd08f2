/**
 * Calls the orders microservice the way a Nest application calls any microservice: a
 * `ClientsModule` client (`ZLinkClientProxy`) injected by name, `send()` for requests and `emit()`
 * for events. Prints one JSON line per step, then `{"type":"done"}`, and exits.
 * Usage: node orders-client.js <orders endpoint>
 */
import 'reflect-metadata';
import { Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type ClientProxy, ClientsModule } from '@nestjs/microservices';
import { TimeoutError, firstValueFrom, lastValueFrom, timeout } from 'rxjs';
import { type ZLinkRuntime, isZLinkError } from '../../lib/index.js';
import { ZLinkClientProxy } from '../../lib/nest/microservices/index.js';

const [endpoint = 'tcp://127.0.0.1:7400'] = process.argv.slice(2);

@Injectable()
class Shop {
  constructor(@Inject('ORDERS') private readonly orders: ClientProxy) {}

  place(sku: string, qty: number) {
    return firstValueFrom(this.orders.send({ channel: 'orders', packet: 'orders.place' }, { sku, qty }));
  }

  shipped(sku: string) {
    return lastValueFrom(this.orders.emit({ channel: 'orders', packet: 'orders.shipped' }, { sku }), {
      defaultValue: undefined,
    });
  }

  /** rxjs `timeout` unsubscribes before the reply: the ZLink request is cancelled, not left pending. */
  impatientReport() {
    const report$ = this.orders.send({ channel: 'orders', packet: 'orders.report' }, { delayMs: 500 });
    return firstValueFrom(report$.pipe(timeout(100)));
  }
}

@Module({
  imports: [
    ClientsModule.register([
      {
        name: 'ORDERS',
        customClass: ZLinkClientProxy,
        options: { clientServer: { orders: { client: { connect: [endpoint] } } }, requestTimeoutMs: 2000 },
      },
    ]),
  ],
  providers: [Shop],
})
class ShopModule {}

const print = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

const app = await NestFactory.createApplicationContext(ShopModule, { logger: false });
const shop = app.get(Shop);
const client = app.get<ZLinkClientProxy>('ORDERS');
// Nest 12's dispatch hook: `packet.metadata` travels as ZLink metadata (the server's ctx.getMetadata()).
client.setOnDispatchHook((packet) => {
  packet.metadata = { 'tenant-id': 'acme' };
});

print({ type: 'placed', reply: await shop.place('sku-apple', 3) });
try {
  await shop.place('sku-pear', 1);
} catch (error) {
  if (!isZLinkError(error)) throw error;
  print({ type: 'refused', code: error.code, details: error.details });
}
await shop.shipped('sku-apple');
print({ type: 'emitted', event: 'orders.shipped' });
try {
  await shop.impatientReport();
} catch (error) {
  if (!(error instanceof TimeoutError)) throw error;
  const pending = client.unwrap<ZLinkRuntime>().snapshot().pendingRequests;
  print({ type: 'gave-up', after: '100 ms', pendingRequests: pending });
}
await app.close();
print({ type: 'done' });
