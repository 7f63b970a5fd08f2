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
import { type HandlerFn, isThenable } from '../core/calls/index.js';
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

/** Binds a decided direct call to one instance; `null`: the method takes the full pipeline. */
type Binder = ((instance: object) => HandlerFn) | null;

/**
 * The decision per context creator, class and method: the same for every instance, so a Spot or
 * Actor class decides once and each activation only binds (the first call on a freshly created or
 * moved object paid the metadata reads and the plan, tens of µs, before its turn started).
 */
const decided = new WeakMap<ExternalContextCreator, WeakMap<object, Map<string, Binder>>>();

/**
 * A handler Nest's pipeline would pass straight through — no guard, interceptor, pipe or exception
 * filter at any level (global, class, method, parameter), and only payload/context parameters — is
 * called directly: same arguments, same error logging, none of the per-call closures and promises
 * the pipeline allocates. Anything else (or a Nest whose internals we cannot read) returns
 * `undefined`, and the caller uses the full pipeline. Decided once per class and method (at
 * bootstrap for channel handlers, at the first activation for a Spot or Actor class).
 */
export function directCall(
  contextCreator: ExternalContextCreator,
  instance: object,
  method: string,
): HandlerFn | undefined {
  const classRef = instance.constructor;
  let byClass = decided.get(contextCreator);
  if (!byClass) decided.set(contextCreator, (byClass = new WeakMap()));
  let byMethod = byClass.get(classRef);
  if (!byMethod) byClass.set(classRef, (byMethod = new Map()));
  let binder = byMethod.get(method);
  if (binder === undefined) {
    binder = decide(
      contextCreator,
      classRef,
      (instance as Record<string, unknown>)[method] as Method,
      method,
    );
    byMethod.set(method, binder);
  }
  return binder?.(instance);
}

function decide(
  contextCreator: ExternalContextCreator,
  classRef: object,
  callback: Method,
  method: string,
): Binder {
  const sources = contextCreator as unknown as EnhancerSources;
  const globals = [
    sources.guardsContextCreator,
    sources.interceptorsContextCreator,
    sources.pipesContextCreator,
    sources.filtersContextCreator,
  ];
  for (const source of globals) {
    if (typeof source?.getGlobalMetadata !== 'function') return null;
    if ((source.getGlobalMetadata() ?? []).length > 0) return null;
  }
  for (const key of [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA]) {
    if (nonEmpty(Reflect.getMetadata(key, classRef)) || nonEmpty(Reflect.getMetadata(key, callback))) {
      return null;
    }
  }
  const params = (Reflect.getMetadata(ROUTE_ARGS_METADATA, classRef, method) ?? {}) as Record<
    string,
    ParamEntry
  >;
  const plan: Plan[number][] = [];
  for (const [key, entry] of Object.entries(params)) {
    if (key.includes(CUSTOM_ROUTE_ARGS_METADATA) || nonEmpty(entry.pipes)) return null;
    const type = Number(key.split(':')[0]);
    if (type !== ZLinkParamtype.PAYLOAD && type !== ZLinkParamtype.CONTEXT) return null;
    plan.push({ index: entry.index, type, data: entry.data });
  }
  const call = callShape(plan);
  // Each instance's own method: the same function as the one decided on, unless an instance overrides it.
  return (instance) => bound(instance, (instance as Record<string, unknown>)[method] as Method, call);
}

type Plan = readonly { index: number; type: ZLinkParamtype; data: unknown }[];
/** A method called with one call's payload and context, in the form its parameters take them. */
type CallShape = (callback: Method, instance: object, payload: unknown, context: unknown) => unknown;

/**
 * How a method takes (payload, context), decided with its plan so that binding it to an activation
 * (the first call on every created or moved object) makes one closure and reads no plan:
 * `(payload, context)` as Nest passes raw arguments, `(payload)` or `(payload, context)` by decorator,
 * or an argument array built per call for any other shape.
 */
function callShape(plan: Plan): CallShape {
  const whole = (p: { type: ZLinkParamtype; data: unknown }): boolean =>
    p.type === ZLinkParamtype.PAYLOAD && (p.data === undefined || p.data === null || p.data === '');
  const [first, second] = [...plan].sort((a, b) => a.index - b.index);
  // Without parameter decorators Nest passes the raw arguments: (payload, context).
  if (plan.length === 0) return rawArguments;
  // The usual shapes, `(@ZLinkPayload() p)` and `(@ZLinkPayload() p, @ZLinkContext() c)`, build no
  // argument array per call.
  if (plan.length === 1 && first?.index === 0 && whole(first)) return payloadOnly;
  if (plan.length === 2 && first?.index === 0 && whole(first) && second?.index === 1)
    if (second.type === ZLinkParamtype.CONTEXT) return rawArguments;
  const length = Math.max(...plan.map((p) => p.index)) + 1;
  return (callback, instance, payload, context) => {
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

const rawArguments: CallShape = (callback, instance, payload, context) =>
  callback.call(instance, payload, context);
const payloadOnly: CallShape = (callback, instance, payload) => callback.call(instance, payload);

/** The handler of one instance: its method called in `call`'s shape, its failures as Nest reports them. */
function bound(instance: object, callback: Method, call: CallShape): HandlerFn {
  return (payload, context) => {
    let result: unknown;
    try {
      result = call(callback, instance, payload, context);
    } catch (error) {
      return fail(error);
    }
    // Every Observable has `subscribe`: the cheap test spares plain values rxjs's instanceof walk.
    if (hasSubscribe(result) && isObservable(result))
      return lastValueFrom(result, { defaultValue: undefined }).catch(fail);
    return isThenable(result) ? result.then(undefined, fail) : result;
  };
}

function fail(error: unknown): never {
  throw toHandlerFailure(logged(error));
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
