/**
 * A billing client: sends `billing.charge` requests with tenant and locale metadata and prints how
 * many each server answered. Usage: node billing-client.js <requests> <minReady> <endpoint>...
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ZLinkModule, ZLinkRouteClient, ZLinkRuntime, isZLinkError } from '../../lib/index.js';

const [requests = '4000', minReady = '1', ...endpoints] = process.argv.slice(2);

@Module({
  imports: [
    ZLinkModule.forRoot({
      clientServer: { billing: { client: { connect: endpoints } } },
      requestTimeoutMs: 5000,
    }),
  ],
})
class BillingClientModule {}

const app = await NestFactory.createApplicationContext(BillingClientModule, { logger: false });
const route = app.get(ZLinkRouteClient);
await app.get(ZLinkRuntime).waitForCandidates('billing', Number(minReady), 10000);

const counts: Record<string, number> = {};
const failures: Record<string, number> = {};
const started = process.hrtime.bigint();
const total = Number(requests);
let next = 0;
await Promise.all(
  Array.from({ length: 32 }, async () => {
    while (next < total) {
      const i = next++;
      try {
        const reply = await route
          .requestToChannel('billing', 'billing.charge', { orderId: `order-${i}`, amount: 10 + (i % 90) })
          .metadata('tenant-id', `tenant-${i % 5}`)
          .metadata('locale', 'ko-KR')
          .async<{ chargedBy: string }>();
        counts[reply.chargedBy] = (counts[reply.chargedBy] ?? 0) + 1;
      } catch (error) {
        const code = isZLinkError(error) ? error.code : 'other';
        failures[code] = (failures[code] ?? 0) + 1;
      }
    }
  }),
);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ counts, failures, seconds: Number(seconds.toFixed(3)) })}\n`);
await app.close();
