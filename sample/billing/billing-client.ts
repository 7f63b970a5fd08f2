/**
 * A billing client: sends `billing.charge` requests with tenant and locale metadata, 32 at a time,
 * from `{type:'run'}` until `{type:'stop'}`, and prints how many each server answered once a second
 * (`tick`) and at the end (`done`). With a Location Store (ZLINK_DEMO_STORE) it finds the servers
 * there (discovery: 'auto'); otherwise it uses the endpoints given.
 * Usage: node billing-client.js <minReady> [endpoint ...]
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ZLinkModule, ZLinkRouteClient, ZLinkRuntime, isZLinkError } from '../../lib/index.js';
import { exitWithParent } from '../exit-with-parent.js';

const [minReady = '1', ...endpoints] = process.argv.slice(2);
const store = process.env.ZLINK_DEMO_STORE;

@Module({
  imports: [
    ZLinkModule.forRoot({
      ...(store && { locationStore: { redis: store, keyPrefix: 'demo', fullReadIntervalMs: 1000 } }),
      clientServer: {
        billing: { client: store ? { discovery: 'auto' } : { connect: endpoints } },
      },
      requestTimeoutMs: 5000,
    }),
  ],
})
class BillingClientModule {}

const app = await NestFactory.createApplicationContext(BillingClientModule, { logger: false });
app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
exitWithParent(app);
const route = app.get(ZLinkRouteClient);
await app.get(ZLinkRuntime).waitForCandidates('billing', Number(minReady), 10000);
const say = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

const counts: Record<string, number> = {};
const failures: Record<string, number> = {};
let running = false;
let sent = 0;

async function worker(): Promise<void> {
  while (running) {
    const i = sent++;
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
}

let workers: Promise<void>[] = [];
let ticker: NodeJS.Timeout | undefined;
const started = { at: 0 };
process.stdin.setEncoding('utf8');
let buffer = '';
process.stdin.on('data', (chunk: string) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const command = JSON.parse(buffer.slice(0, nl)) as { type: string };
    buffer = buffer.slice(nl + 1);
    if (command.type === 'run' && !running) {
      running = true;
      started.at = Date.now();
      workers = Array.from({ length: 32 }, worker);
      ticker = setInterval(() => say({ type: 'tick', counts, failures }), 1000);
    } else if (command.type === 'stop') {
      running = false;
      clearInterval(ticker);
      void Promise.all(workers).then(() =>
        say({ type: 'done', counts, failures, seconds: (Date.now() - started.at) / 1000 }),
      );
    }
  }
});
say({ type: 'ready' });
