/**
 * A `system-events` process (classic fanout). Usage:
 *   node events-node.js publisher          — publishes on {type:'publish', n, tail}
 *   node events-node.js subscriber <name> <endpoint> [slow]
 * A slow subscriber pauses on its first event for two seconds (one handler at a time), so the
 * publisher drops its share meanwhile; the fast one keeps up. `{type:'report'}` prints the counts.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  FanoutHandler,
  ZLinkFanoutClient,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRuntime,
  type ZLinkOptions,
} from '../../lib/index.js';
import { exitWithParent } from '../exit-with-parent.js';

const [role = 'publisher', name = 'subscriber', endpoint = '', speed = 'fast'] = process.argv.slice(2);
const slow = speed === 'slow';
// With a Location Store (ZLINK_DEMO_STORE) the publisher is found there, not at `endpoint`.
const store = process.env.ZLINK_DEMO_STORE;
const locationStore = store ? { locationStore: { redis: store, keyPrefix: 'demo' } } : {};
let handled = 0;

interface SystemNotice {
  seq: number;
  text: string;
}

@Injectable()
class NoticeHandler {
  @FanoutHandler('system-events', 'system.notice')
  async notice(@ZLinkPayload() _notice: SystemNotice) {
    handled++;
    // Deliberately slow: the first event holds the only handler slot for two seconds.
    if (slow && handled === 1) await new Promise((r) => setTimeout(r, 2000));
  }
}

const options: ZLinkOptions =
  role === 'publisher'
    ? {
        ...locationStore,
        fanout: { 'system-events': { publisher: { listen: { port: 0, bindHost: '127.0.0.1' } } } },
      }
    : {
        ...locationStore,
        fanout: {
          // The fast one also buffers more, so a moment of CPU contention costs it nothing.
          'system-events': {
            subscriber: {
              ...(store ? { discovery: 'auto' as const } : { connect: [endpoint] }),
              receiveHighWaterMark: slow ? 10 : 20000,
            },
          },
        },
        handlerConcurrency: slow ? 1 : 1024,
      };

@Module({
  imports: [ZLinkModule.forRoot(options)],
  providers: role === 'publisher' ? [] : [NoticeHandler],
})
class EventsModule {}

const app = await NestFactory.createApplicationContext(EventsModule, { logger: false });
app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
exitWithParent(app);
const runtime = app.get(ZLinkRuntime);
const say = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

if (role === 'publisher') {
  say({ type: 'ready', endpoint: runtime.endpoint('system-events') });
} else {
  const link = () => runtime.snapshot().fanout[0]?.subscriber?.publishers[0];
  while (link()?.rid === undefined) await new Promise((r) => setTimeout(r, 20));
  say({ type: 'ready', name });
}

const text = 'maintenance window '.repeat(100); // ~2 KB events: the socket buffers hold only a few thousand
process.stdin.setEncoding('utf8');
let buffer = '';
process.stdin.on('data', (chunk: string) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const command = JSON.parse(buffer.slice(0, nl)) as Command;
    buffer = buffer.slice(nl + 1);
    void run(command).catch((error: unknown) => say({ type: 'error', message: String(error) }));
  }
});

interface Command {
  type: string;
  n?: number;
  tail?: number;
  /** report: answer once handled + dropped reaches this, or after `withinMs`. */
  until?: number;
  withinMs?: number;
}

async function run(command: Command): Promise<void> {
  if (command.type === 'publish') {
    const fanout = app.get(ZLinkFanoutClient);
    let seq = 0;
    for (let i = 0; i < (command.n ?? 0); i++) {
      await fanout.publish('system-events', 'system.notice', { seq: seq++, text }).async();
      // About 25 events a millisecond: a busy publisher, not a tight loop.
      if (i % 25 === 24) await new Promise((r) => setTimeout(r, 1));
    }
    // A few more, spaced out: a subscriber sees a gap (and counts it) when the next event arrives.
    for (let i = 0; i < (command.tail ?? 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      await fanout.publish('system-events', 'system.notice', { seq: seq++, text }).async();
    }
    say({ type: 'published', count: seq });
  } else if (command.type === 'report') {
    const link = () => runtime.snapshot().fanout[0]?.subscriber?.publishers[0];
    const deadline = Date.now() + (command.withinMs ?? 0);
    while (handled + (link()?.dropped ?? 0) < (command.until ?? 0) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const { received, dropped } = link() ?? {};
    say({ type: 'report', name, handled, received, dropped });
  }
}
