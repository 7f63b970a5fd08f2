import { IntrinsicException, Logger } from '@nestjs/common';
import {
  CUSTOM_ROUTE_ARGS_METADATA,
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants.js';
import type { ExternalContextCreator } from '@nestjs/core';
import { isObservable, lastValueFrom } from 'rxjs';
import { type HandlerFn, isThenable } from '../core/index.js';
import { toHandlerFailure } from './handler-failure.js';
import { ZLinkParamtype } from './decorators/zlink.constants.js';

type Method = (...args: unknown[]) => unknown;

/** The parts of Nest's context creator we read; absent (another Nest version) means "no shortcut". */
interface EnhancerSources {
  guardsContextCreator?: { getGlobalMetadata?(): unknown[] };
  interceptorsContextCreator?: { getGlobalMetadata?(): unknown[] };
  pipesContextCreator?: { getGlobalMetadata?(): unknown[] };
  filtersContextCreator?: { getGlobalMetadata?(): unknown[] };
}

interface ParamEntry {
  index: number;
  data?: unknown;
  pipes?: unknown[];
}

const logger = new Logger('ExceptionsHandler');

/**
 * A handler Nest's pipeline would pass straight through — no guard, interceptor, pipe or exception
 * filter at any level (global, class, method, parameter), and only payload/context parameters — is
 * called directly: same arguments, same error logging, none of the per-call closures and promises
 * the pipeline allocates. Anything else (or a Nest whose internals we cannot read) returns
 * `undefined`, and the caller uses the full pipeline. Decided once, at bootstrap. @internal
 */
export function directCall(
  contextCreator: ExternalContextCreator,
  instance: object,
  method: string,
): HandlerFn | undefined {
  const sources = contextCreator as unknown as EnhancerSources;
  const globals = [
    sources.guardsContextCreator,
    sources.interceptorsContextCreator,
    sources.pipesContextCreator,
    sources.filtersContextCreator,
  ];
  for (const source of globals) {
    if (typeof source?.getGlobalMetadata !== 'function') return undefined;
    if ((source.getGlobalMetadata() ?? []).length > 0) return undefined;
  }
  const callback = (instance as Record<string, unknown>)[method] as Method;
  const classRef = instance.constructor;
  for (const key of [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA]) {
    if (nonEmpty(Reflect.getMetadata(key, classRef)) || nonEmpty(Reflect.getMetadata(key, callback))) {
      return undefined;
    }
  }
  const params = (Reflect.getMetadata(ROUTE_ARGS_METADATA, classRef, method) ?? {}) as Record<
    string,
    ParamEntry
  >;
  const plan: { index: number; type: ZLinkParamtype; data: unknown }[] = [];
  for (const [key, entry] of Object.entries(params)) {
    if (key.includes(CUSTOM_ROUTE_ARGS_METADATA) || nonEmpty(entry.pipes)) return undefined;
    const type = Number(key.split(':')[0]);
    if (type !== ZLinkParamtype.PAYLOAD && type !== ZLinkParamtype.CONTEXT) return undefined;
    plan.push({ index: entry.index, type, data: entry.data });
  }
  const call =
    plan.length === 0
      ? // Without parameter decorators Nest passes the raw arguments: (payload, context).
        (payload: unknown, context: unknown) => callback.call(instance, payload, context)
      : planned(instance, callback, plan);
  const fail = (error: unknown): never => {
    throw toHandlerFailure(logged(error));
  };
  return (payload, context) => {
    let result: unknown;
    try {
      result = call(payload, context);
    } catch (error) {
      return fail(error);
    }
    // Every Observable has `subscribe`: the cheap test spares plain values rxjs's instanceof walk.
    if (hasSubscribe(result) && isObservable(result))
      return lastValueFrom(result, { defaultValue: undefined }).catch(fail);
    return isThenable(result) ? result.then(undefined, fail) : result;
  };
}

function planned(
  instance: object,
  callback: Method,
  plan: { index: number; type: ZLinkParamtype; data: unknown }[],
): (payload: unknown, context: unknown) => unknown {
  const length = Math.max(...plan.map((p) => p.index)) + 1;
  const whole = (p: { type: ZLinkParamtype; data: unknown }): boolean =>
    p.type === ZLinkParamtype.PAYLOAD && (p.data === undefined || p.data === null || p.data === '');
  // The usual shapes, `(@ZLinkPayload() p)` and `(@ZLinkPayload() p, @ZLinkContext() c)`, build no
  // argument array per call.
  const [first, second] = [...plan].sort((a, b) => a.index - b.index);
  if (plan.length === 1 && first?.index === 0 && whole(first))
    return (payload) => callback.call(instance, payload);
  if (plan.length === 2 && first?.index === 0 && whole(first) && second?.index === 1)
    if (second.type === ZLinkParamtype.CONTEXT)
      return (payload, context) => callback.call(instance, payload, context);
  return (payload, context) => {
    // Holes go to the method as undefined, as Nest passes them.
    const args: unknown[] = new Array(length);
    for (const p of plan) {
      if (p.type === ZLinkParamtype.CONTEXT) args[p.index] = context;
      else if (p.data === undefined || p.data === null || p.data === '') args[p.index] = payload;
      else
        args[p.index] =
          payload === null || payload === undefined
            ? undefined
            : (payload as Record<string, unknown>)[String(p.data)];
    }
    return callback.apply(instance, args);
  };
}

/** Nest's default external exception filter logs an Error before rethrowing it; so do we. */
function logged(error: unknown): unknown {
  if (error instanceof Error && !(error instanceof IntrinsicException)) logger.error(error);
  return error;
}

function hasSubscribe(value: unknown): boolean {
  return typeof (value as { subscribe?: unknown } | null)?.subscribe === 'function';
}

function nonEmpty(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}
