import type { MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { configurationError } from '../core/errors.js';
import {
  type ObjectClassDescription,
  ObjectClassRegistry,
  type ObjectHandlerDescription,
  type ObjectSubscriptionDescription,
  lifecycleHooksOf,
  objectDecoratorName,
} from '../core/objects/index.js';
import type { ObjectClassMetadata } from './decorators/object.decorator.js';
import type { ObjectHandlerMetadata, SpotSubscribeMetadata } from './decorators/object-handler.decorator.js';
import {
  ZLINK_ACTOR_HANDLER,
  ZLINK_OBJECT_CLASS,
  ZLINK_SPOT_HANDLER,
  ZLINK_SPOT_SUBSCRIBE,
} from './decorators/zlink.constants.js';
import { read } from './zlink-metadata.accessor.js';

type Class = { readonly name: string; readonly prototype: Record<string, unknown> };

/**
 * Collects the `@Spot` / `@Actor` classes among the providers and controllers into a registry, without
 * building any instance (an object's instances are built per activation, see `@Spot`). Throws
 * `Configuration` naming the class or `Class.method` for: a singleton object class, an object handler
 * or `@SpotSubscribe` on a class without `@Spot`/`@Actor`, a handler of the other kind, a subscription
 * on an Actor or on a method without a `@SpotHandler`, and (through the registry) duplicates. @internal
 */
export function discoverObjectClasses(
  wrappers: readonly InstanceWrapper[],
  scanner: MetadataScanner,
): ObjectClassRegistry {
  const registry = new ObjectClassRegistry();
  const seen = new Set<unknown>();
  for (const wrapper of wrappers) {
    const metatype = wrapper.metatype as Class | null | undefined;
    if (wrapper.isAlias || wrapper.inject || !metatype?.prototype || seen.has(metatype)) continue;
    seen.add(metatype);
    const metadata = Reflect.getMetadata(ZLINK_OBJECT_CLASS, metatype) as ObjectClassMetadata | undefined;
    const methods = scanner.getAllMethodNames(metatype.prototype);
    if (!metadata) {
      checkNoObjectMethods(metatype, methods);
      continue;
    }
    if (!wrapper.isTransient) {
      throw configurationError(
        `${objectDecoratorName(metadata.kind)}('${metadata.type}') ${metatype.name}`,
        'an object class is built once per activation and must stay transient: remove the @Injectable() above the decorator (or its scope)',
      );
    }
    registry.register(describe(metatype, metadata, methods));
  }
  return registry;
}

function describe(metatype: Class, metadata: ObjectClassMetadata, methods: string[]): ObjectClassDescription {
  const handlers: ObjectHandlerDescription[] = [];
  const subscriptions: ObjectSubscriptionDescription[] = [];
  const [own, other] =
    metadata.kind === 'spot'
      ? [ZLINK_SPOT_HANDLER, ZLINK_ACTOR_HANDLER]
      : [ZLINK_ACTOR_HANDLER, ZLINK_SPOT_HANDLER];
  const decorator = objectDecoratorName(metadata.kind);
  for (const method of methods) {
    const fn = metatype.prototype[method];
    const source = `${metatype.name}.${method}`;
    if (read<unknown>(other, fn).length > 0) {
      const wrong = metadata.kind === 'spot' ? '@ActorHandler' : '@SpotHandler';
      throw configurationError(`${wrong} on ${source}`, `the class is a ${decorator}('${metadata.type}')`);
    }
    const mine = read<ObjectHandlerMetadata>(own, fn);
    for (const { packet, kind } of mine) handlers.push({ packet, kind, method, source });
    const subscribes = read<SpotSubscribeMetadata>(ZLINK_SPOT_SUBSCRIBE, fn);
    if (subscribes.length === 0) continue;
    if (metadata.kind === 'actor')
      throw configurationError(
        `@SpotSubscribe on ${source}`,
        'only Spots subscribe to Logical Multicast; the class is an @Actor',
      );
    const packet = (mine.find((h) => h.kind === 'send') ?? mine[0])?.packet;
    if (packet === undefined)
      throw configurationError(
        `@SpotSubscribe on ${source}`,
        'the method needs a @SpotHandler to receive the events',
      );
    for (const { channel, topic } of subscribes)
      subscriptions.push({ channel, topic: topic ?? packet, method, source });
  }
  return Object.freeze({
    kind: metadata.kind,
    type: metadata.type,
    token: metatype,
    source: metatype.name,
    options: metadata.options,
    handlers: Object.freeze(handlers),
    subscriptions: Object.freeze(subscriptions),
    hooks: lifecycleHooksOf(metatype.prototype as object),
  });
}

function checkNoObjectMethods(metatype: Class, methods: string[]): void {
  const decorators: [string, string][] = [
    [ZLINK_SPOT_HANDLER, '@SpotHandler'],
    [ZLINK_ACTOR_HANDLER, '@ActorHandler'],
    [ZLINK_SPOT_SUBSCRIBE, '@SpotSubscribe'],
  ];
  for (const method of methods) {
    for (const [key, name] of decorators) {
      if (read<unknown>(key, metatype.prototype[method]).length === 0) continue;
      throw configurationError(
        `${name} on ${metatype.name}.${method}`,
        'the class has no @Spot or @Actor decorator',
      );
    }
  }
}
