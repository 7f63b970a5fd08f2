import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import {
  type INestApplicationContext,
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  Scope,
} from '@nestjs/common';
import {
  ChannelHandler,
  ZLinkError,
  ZLinkModule,
  ZLinkRouteClient,
  ZLinkRuntime,
} from '../../../lib/index.js';
import { bootApp, deferred, localOptions, rejectionOf } from './nest-app.js';

@Injectable()
class ChargeA {
  @ChannelHandler('billing', 'billing.charge')
  charge(): string {
    return 'a';
  }
}

@Injectable()
class ChargeB {
  @ChannelHandler('billing', 'billing.charge')
  charge(): string {
    return 'b';
  }
}

@Injectable()
class ShippingHandlers {
  @ChannelHandler('shipping', 'shipping.quote')
  quote(): number {
    return 1;
  }
}

@Injectable({ scope: Scope.REQUEST })
class ScopedHandlers {
  @ChannelHandler('billing', 'billing.scoped')
  scoped(): number {
    return 1;
  }
}

let entered = deferred<void>(0);

@Injectable()
class StuckHandlers {
  @ChannelHandler('billing', 'billing.stuck')
  stuck(): Promise<never> {
    entered.resolve();
    return new Promise<never>(() => undefined);
  }
}

@Injectable()
class ConfigService {
  readonly timeoutMs = 1234;
}

@Module({ providers: [ConfigService], exports: [ConfigService] })
class ConfigModule {}

describe('ZLinkModule lifecycle', () => {
  let app: INestApplicationContext | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('forRootAsync builds the options with a factory and injected dependencies', async () => {
    app = await bootApp({
      zlink: ZLinkModule.forRootAsync({
        imports: [ConfigModule],
        inject: [ConfigService],
        useFactory: (config: ConfigService) => ({
          ...localOptions('billing'),
          requestTimeoutMs: config.timeoutMs,
        }),
      }),
      providers: [ChargeA],
    });
    expect(app.get(ZLinkRuntime).options.requestTimeoutMs).toBe(1234);
    await expect(
      app.get(ZLinkRouteClient).requestToChannel('billing', 'billing.charge', {}).async(),
    ).resolves.toBe('a');
  });

  it('two handlers for one (channel, kind, packet) reject the bootstrap with Configuration naming both', async () => {
    const error = await rejectionOf(() => bootApp({ providers: [ChargeA, ChargeB] }));
    expect(error).toBeInstanceOf(ZLinkError);
    expect(error.code).toBe('Configuration');
    expect(error.message).toContain('ChargeA.charge');
    expect(error.message).toContain('ChargeB.charge');
  });

  it('a handler on a channel this process does not serve rejects the bootstrap naming the handler', async () => {
    const error = await rejectionOf(() => bootApp({ providers: [ShippingHandlers] }));
    expect(error.code).toBe('Configuration');
    expect(error.message).toContain('ShippingHandlers.quote');
    expect(error.message).toContain('shipping');
  });

  it('a handler on a request-scoped provider rejects the bootstrap naming it', async () => {
    const error = await rejectionOf(() => bootApp({ providers: [ScopedHandlers] }));
    expect(error.code).toBe('Configuration');
    expect(error.message).toContain('ScopedHandlers.scoped');
  });

  it('a bad option rejects the bootstrap with Configuration naming the option', async () => {
    const error = await rejectionOf(() =>
      bootApp({ zlink: ZLinkModule.forRoot({ clientServer: { billing: { server: { weight: 20000 } } } }) }),
    );
    expect(error.code).toBe('Configuration');
    expect(error.message).toContain('clientServer.billing.server.weight');
  });

  it('a bad @ChannelHandler argument throws Configuration when the class is defined', () => {
    const define = (): unknown => {
      class Bad {
        @ChannelHandler('', 'p')
        handle(): void {}
      }
      return Bad;
    };
    expect(define).toThrow(
      expect.objectContaining({ code: 'Configuration', message: expect.stringContaining('Bad.handle') }),
    );
  });

  it('app.close() drains up to drainTimeoutMs, then ends a pending request with Shutdown and closes the listener', async () => {
    entered = deferred();
    app = await bootApp({
      providers: [StuckHandlers],
      zlink: ZLinkModule.forRoot({ ...localOptions('billing'), drainTimeoutMs: 300 }),
    });
    const drainEvents: string[] = [];
    app.get(ZLinkRuntime).events.subscribe((e) => {
      if (e.type === 'drain') drainEvents.push(e.phase);
    });
    const runtime = app.get(ZLinkRuntime);
    const port = Number(new URL(runtime.endpoint('billing')!.replace('tcp:', 'http:')).port);
    const pending = rejectionOf(() =>
      app!.get(ZLinkRouteClient).requestToChannel('billing', 'billing.stuck', {}).async(),
    );
    await entered.promise;
    await app.close();
    app = undefined;
    // The handler never finishes: the drain gives up at its deadline, then the close cuts through.
    expect(drainEvents).toEqual(['started', 'deadline']);
    const error = await pending;
    expect(error).toBeInstanceOf(ZLinkError);
    expect(error.code).toBe('Shutdown');
    const after = await rejectionOf(() =>
      runtime.routeClient.requestToChannel('billing', 'billing.stuck', {}).async(),
    );
    expect(after.code).toBe('Shutdown');
    await expect(refusedWithin(port, 2000)).resolves.toBe(true);
  });
});

describe('shutdown order', () => {
  it("ZLink stops in onModuleDestroy: by the application's beforeApplicationShutdown, calls end Shutdown", async () => {
    const seen: string[] = [];
    @Injectable()
    class Database implements BeforeApplicationShutdown {
      constructor(private readonly route: ZLinkRouteClient) {}
      async beforeApplicationShutdown(): Promise<void> {
        const error = await rejectionOf(() =>
          this.route.requestToChannel('billing', 'billing.charge', {}).async(),
        );
        seen.push(error.code);
      }
    }
    const ctx = await bootApp({ providers: [ChargeA, Database] });
    await ctx.close();
    expect(seen).toEqual(['Shutdown']);
  });
});

/** True once a TCP connect to the port is refused (zeromq unbinds on its I/O thread), false past the bound. */
async function refusedWithin(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    if (refused) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}
