import 'reflect-metadata';
import {
  type DynamicModule,
  type INestApplicationContext,
  type LoggerService,
  Module,
  type Provider,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type ZLinkOptions, ZLinkModule } from '../../../lib/index.js';

/** One process both Client and Server of each channel; the client reaches the local server over real zeromq. */
export function localOptions(...channels: string[]): ZLinkOptions {
  const clientServer: NonNullable<ZLinkOptions['clientServer']> = {};
  for (const channel of channels)
    clientServer[channel] = { server: { listen: { bindHost: '127.0.0.1' } }, client: {} };
  return { clientServer, requestTimeoutMs: 5000 };
}

export interface AppParts {
  zlink?: DynamicModule;
  imports?: (Type | DynamicModule)[];
  providers?: Provider[];
  controllers?: Type[];
}

/** Boots an application context (no HTTP platform): hooks run, the runtime starts. */
export function bootApp(parts: AppParts): Promise<INestApplicationContext> {
  @Module({
    imports: [parts.zlink ?? ZLinkModule.forRoot(localOptions('billing')), ...(parts.imports ?? [])],
    providers: parts.providers ?? [],
    controllers: parts.controllers ?? [],
  })
  class AppModule {}
  // abortOnError: false so a failing provider factory rejects instead of aborting the process.
  return NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
}

/**
 * A promise settled from outside, with a bound so no test waits forever (0: unbounded). The
 * timer never keeps the process alive, and a bound that fires after its test already failed is
 * not an unhandled rejection.
 */
export function deferred<T>(timeoutMs = 5000): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = (value) => {
      clearTimeout(timer);
      res(value);
    };
    if (timeoutMs > 0)
      timer = setTimeout(() => rej(new Error(`not settled within ${timeoutMs} ms`)), timeoutMs).unref();
  });
  promise.catch(() => undefined);
  return { promise, resolve };
}

/** Runs `fn` and returns what it rejected with; fails if it resolved. */
export async function rejectionOf(fn: () => Promise<unknown>): Promise<any> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** A Nest logger that keeps every line with its level and context. */
export class CapturingLogger implements LoggerService {
  readonly lines: { level: string; message: string; context?: string }[] = [];
  log(message: string, context?: string) {
    this.lines.push({ level: 'log', message, context });
  }
  warn(message: string, context?: string) {
    this.lines.push({ level: 'warn', message, context });
  }
  error(message: string, _trace?: string, context?: string) {
    this.lines.push({ level: 'error', message, context });
  }
  debug(message: string, context?: string) {
    this.lines.push({ level: 'debug', message, context });
  }
  verbose(message: string, context?: string) {
    this.lines.push({ level: 'verbose', message, context });
  }

  /** The lines of context `ZLink` (the runtime's own). */
  zlink(): { level: string; message: string }[] {
    return this.lines.filter((l) => l.context === 'ZLink').map(({ level, message }) => ({ level, message }));
  }
}
