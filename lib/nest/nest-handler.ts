import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import type { ExternalContextCreator } from '@nestjs/core';
import type { HandlerFn } from '../core/calls/index.js';
import { directCall } from './direct-call.js';
import { oneResult } from './handler-failure.js';
import { ZLinkParamsFactory } from './zlink-params.factory.js';

const paramsFactory = new ZLinkParamsFactory();

/**
 * `instance[method]` as a ZLink handler through Nest's pipeline (guards, interceptors, pipes, exception
 * filters, parameter decorators), or called directly when the pipeline would pass it straight through
 * (see `directCall`). Built once per instance and method, never per message. @internal
 */
export function nestHandler(
  contextCreator: ExternalContextCreator,
  instance: object,
  method: string,
): HandlerFn {
  const direct = directCall(contextCreator, instance, method);
  if (direct) return direct;
  const callable = contextCreator.create(
    instance as Record<string, unknown>,
    (instance as Record<string, (...args: unknown[]) => unknown>)[method] as (...args: unknown[]) => unknown,
    method,
    ROUTE_ARGS_METADATA,
    paramsFactory,
    undefined,
    undefined,
    { guards: true, interceptors: true, filters: true },
    'rpc',
  );
  return (payload, context) => oneResult(() => callable(payload, context));
}
