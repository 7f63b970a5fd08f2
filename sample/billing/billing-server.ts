/**
 * A billing server: serves the `billing` ChannelName with the weight given on the command line. With
 * a Location Store (ZLINK_DEMO_STORE) it publishes itself there; SIGUSR2 drains it.
 * Usage: node billing-server.js <rid> <weight> [port]
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ChannelHandler,
  ZLinkContext,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRuntime,
  type ZLinkMessageContext,
} from '../../lib/index.js';
import { exitWithParent } from '../exit-with-parent.js';

const [rid = 'billing-1', weight = '100', port = '0'] = process.argv.slice(2);
const store = process.env.ZLINK_DEMO_STORE;

interface Charge {
  orderId: string;
  amount: number;
}

@Injectable()
class BillingHandlers {
  @ChannelHandler('billing', 'billing.charge')
  charge(@ZLinkPayload() req: Charge, @ZLinkContext() ctx: ZLinkMessageContext) {
    return {
      orderId: req.orderId,
      chargedBy: rid,
      tenant: ctx.metadata['tenant-id'],
      locale: ctx.metadata.locale,
    };
  }
}

@Module({
  imports: [
    ZLinkModule.forRoot({
      ...(store && { locationStore: { redis: store, keyPrefix: 'demo' } }),
      clientServer: {
        billing: {
          server: { listen: { port: Number(port), bindHost: '127.0.0.1' }, weight: Number(weight), rid },
        },
      },
    }),
  ],
  providers: [BillingHandlers],
})
class BillingServerModule {}

const app = await NestFactory.createApplicationContext(BillingServerModule, { logger: false });
app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
exitWithParent(app);
const runtime = app.get(ZLinkRuntime);
process.stdout.write(
  `${JSON.stringify({ rid, weight: Number(weight), endpoint: runtime.endpoint('billing') })}\n`,
);
// The demo asks for a drain with SIGUSR2: clients stop choosing us, accepted work finishes.
process.on('SIGUSR2', () => void runtime.drain());
