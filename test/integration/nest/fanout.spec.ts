/**
 * Classic fanout through Nest (issue 6 items 1, 3): `@FanoutHandler` found by packet name with the topic
 * in its context, `ZLinkFanoutClient` injectable — across two Nest application contexts.
 */
import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import {
  FanoutHandler,
  ZLinkContext,
  ZLinkFanoutClient,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRuntime,
  type ZLinkFanoutContext,
} from '../../../lib/index.js';
import { waitFor } from '../../helpers/index.js';
import { bootApp, rejectionOf } from './nest-app.js';

const seen: { payload: unknown; topic: unknown; packet: string }[] = [];

@Injectable()
class Notices {
  // One handler for two topics: the context says which one an event came on.
  @FanoutHandler('system-events', 'system.notice')
  notice(@ZLinkPayload() payload: { text: string }, @ZLinkContext() ctx: ZLinkFanoutContext) {
    seen.push({ payload, topic: ctx.topic, packet: ctx.packet });
  }
}

const apps: INestApplicationContext[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  seen.length = 0;
});

describe('@FanoutHandler and ZLinkFanoutClient', () => {
  it('an injected fanout client publishes; the subscriber app runs the handler with payload, packet and topic', async () => {
    const publisher = await bootApp({
      zlink: ZLinkModule.forRoot({
        fanout: { 'system-events': { publisher: { listen: { bindHost: '127.0.0.1' } } } },
      }),
    });
    apps.push(publisher);
    const endpoint = publisher.get(ZLinkRuntime).endpoint('system-events') as string;
    const subscriber = await bootApp({
      zlink: ZLinkModule.forRoot({
        fanout: {
          'system-events': { subscriber: { connect: [endpoint], topics: ['maintenance', 'outage'] } },
        },
      }),
      providers: [Notices],
    });
    apps.push(subscriber);
    const runtime = subscriber.get(ZLinkRuntime);
    await waitFor(
      () => runtime.snapshot().fanout[0]?.subscriber?.publishers[0]?.rid !== undefined,
      5000,
      'subscribed',
    );
    const client = publisher.get(ZLinkFanoutClient);
    await client
      .publish('system-events', 'system.notice', { text: 'down at 2' }, { topic: 'maintenance' })
      .async();
    await client.publish('system-events', 'system.notice', { text: 'down now' }, { topic: 'outage' }).async();
    // Not subscribed: never arrives.
    await client.publish('system-events', 'system.notice', { text: 'chatter' }).async();
    await waitFor(() => seen.length === 2, 5000, 'two notices');
    expect(seen).toEqual([
      { payload: { text: 'down at 2' }, topic: 'maintenance', packet: 'system.notice' },
      { payload: { text: 'down now' }, topic: 'outage', packet: 'system.notice' },
    ]);
  });

  it('a @FanoutHandler on a channel without a subscriber here fails the bootstrap naming the handler', async () => {
    const error = await rejectionOf(() =>
      bootApp({
        zlink: ZLinkModule.forRoot({ fanout: { 'system-events': { publisher: {} } } }),
        providers: [Notices],
      }),
    );
    expect(error.code).toBe('Configuration');
    expect(error.message).toContain('Notices.notice');
  });
});
