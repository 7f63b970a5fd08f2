import { type PipeTransform, type Type, assignMetadata } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { ZLinkParamtype } from './zlink.constants.js';

type Pipe = Type<PipeTransform> | PipeTransform;

/**
 * Injects the decoded payload of a `@ChannelHandler` method, optionally one property of it
 * (`@ZLinkPayload('orderId')`), through the given pipes. Equivalent to `@Payload()` from
 * `@nestjs/microservices`. A pipe that throws (e.g. `ValidationPipe`) ends a request with an error
 * reply; the handler does not run.
 */
export function ZLinkPayload(...pipes: Pipe[]): ParameterDecorator;
export function ZLinkPayload(property: string, ...pipes: Pipe[]): ParameterDecorator;
export function ZLinkPayload(propertyOrPipe?: string | Pipe, ...pipes: Pipe[]): ParameterDecorator {
  const data = typeof propertyOrPipe === 'string' ? propertyOrPipe : undefined;
  const all =
    typeof propertyOrPipe === 'string' || propertyOrPipe === undefined ? pipes : [propertyOrPipe, ...pipes];
  return paramDecorator(ZLinkParamtype.PAYLOAD, data, all);
}

/**
 * Injects the `ZLinkMessageContext` (channel, kind, packet, frozen metadata, correlation). Equivalent to
 * `@Ctx()`.
 */
export function ZLinkContext(): ParameterDecorator {
  return paramDecorator(ZLinkParamtype.CONTEXT, undefined, []);
}

/** @internal */
export function paramDecorator(
  type: ZLinkParamtype,
  data: string | undefined,
  pipes: Pipe[],
): ParameterDecorator {
  return (target, key, index) => {
    if (key === undefined) return;
    const args =
      (Reflect.getMetadata(ROUTE_ARGS_METADATA, target.constructor, key) as object | undefined) ?? {};
    Reflect.defineMetadata(
      ROUTE_ARGS_METADATA,
      assignMetadata(args, type, index, { data, pipes }),
      target.constructor,
      key,
    );
  };
}
