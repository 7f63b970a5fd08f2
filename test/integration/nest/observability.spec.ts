/**
 * Issue 7: observability for Nest code — the runtime's events as rxjs Observables
 * (`ZLinkEventStream`) and lifecycle logs through Nest's Logger.
 */
import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { type INestApplicationContext, type LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { firstValueFrom, take, toArray } from 'rxjs';
import {
  ZLinkEventStream,
  ZLinkModule,
  ZLinkRouteClient,
  ZLinkRuntime,
  isZLinkError,
} from '../../../lib/index.js';
import { waitFor, within } from '../../helpers/index.js';
import { CapturingLogger, localOptions } from './nest-app.js';

let app: INestApplicationContext | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function boot(logger: LoggerService | false = false): Promise<INestApplicationContext> {
  @Module({ imports: [ZLinkModule.forRoot(localOptions('billing'))] })
  class AppModule {}
  app = await NestFactory.createApplicationContext(AppModule, { logger, abortOnError: false });
  return app;
}

describe('ZLinkEventStream: runtime events as Observables', () => {
  it('of(types) yields only those types and keeps per-message events off; events$ carries selection events', async () => {
    const ctx = await boot();
    const stream = ctx.get(ZLinkEventStream);
    const runtime = ctx.get(ZLinkRuntime);
    await runtime.waitForCandidates('billing', 1);

    const states = firstValueFrom(stream.of('server_state').pipe(take(1)));
    expect(runtime.events.perMessage).toBe(false);
    runtime.setChannelWeight('billing', 50);
    await expect(within(states, 5000, 'server_state')).resolves.toMatchObject({
      type: 'server_state',
      channel: 'billing',
      weight: 50,
    });

    const selections = firstValueFrom(stream.of('selection').pipe(take(2), toArray()));
    expect(runtime.events.perMessage).toBe(true);
    const client = ctx.get(ZLinkRouteClient);
    await client
      .requestToChannel('billing', 'nobody.handles', 1)
      .async()
      .catch(() => undefined);
    await client
      .requestToChannel('billing', 'nobody.handles', 2)
      .async()
      .catch(() => undefined);
    const seen = await within(selections, 5000, 'two selections');
    expect(seen.map((e) => [e.type, e.channel, e.admission])).toEqual([
      ['selection', 'billing', 'immediate'],
      ['selection', 'billing', 'immediate'],
    ]);
    // take(2) completed: the subscription is gone, and with it the per-message listener.
    expect(runtime.events.perMessage).toBe(false);
  });
});

describe("Nest's Logger: lifecycle at log/warn, per-message failures rate-limited", () => {
  it('listening is logged under context ZLink; a missing handler is a warning, repeated ones are folded', async () => {
    const logger = new CapturingLogger();
    const ctx = await boot(logger);
    const zlink = () => logger.lines.filter((l) => l.context === 'ZLink');
    expect(zlink()).toContainEqual(
      expect.objectContaining({
        level: 'log',
        message: expect.stringMatching(/^'billing' listening on tcp:\/\/127\.0\.0\.1:\d+$/),
      }),
    );
    const runtime = ctx.get(ZLinkRuntime);
    await runtime.waitForCandidates('billing', 1);
    const client = ctx.get(ZLinkRouteClient);
    for (let i = 0; i < 5; i++) {
      const failed = await client
        .requestToChannel('billing', 'missing', i)
        .async()
        .catch((e: unknown) => e);
      expect(isZLinkError(failed, 'RemoteError')).toBe(true);
    }
    await waitFor(() => zlink().some((l) => l.message.startsWith('no_handler')), 5000, 'no_handler warning');
    const warnings = zlink().filter((l) => l.message.startsWith('no_handler'));
    expect(warnings[0]).toMatchObject({
      level: 'warn',
      message: expect.stringContaining("'billing' (missing)"),
    });
    // Five failures within a second: one line (the others are counted into the next one).
    expect(warnings).toHaveLength(1);
    // The successful path logs nothing per message.
    expect(zlink().filter((l) => l.message.startsWith('ok'))).toEqual([]);
  });
});
