import { Injectable, Scope } from '@nestjs/common';
import { configurationError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import { type ObjectClassOptions, normalizeObjectClassOptions } from '../../core/objects/index.js';
import { ZLINK_OBJECT_CLASS } from './zlink.constants.js';
import { checkName } from './handler-decorator.js';

export type { ObjectClassOptions };

/** What `@Spot` / `@Actor` record on a class. @internal */
export interface ObjectClassMetadata {
  readonly kind: ObjectKind;
  readonly type: string;
  readonly options: Readonly<ObjectClassOptions>;
}

/**
 * Declares a Spot class of type `type`: a stateful object found by global id, one instance per activation,
 * processing one message at a time (docs/architecture.md#execution). Its `@SpotHandler` methods receive the
 * calls; `onActivate(ctx)`, `onDeactivate(ctx, reason)`, `capture()` and `restore(state)` are called when
 * present. List the class in a module's `providers`.
 *
 * Why the class becomes a transient provider: Nest users expect constructor injection of their
 * singletons, and a Spot needs a fresh instance per activation, never a shared one. `@Spot` marks the
 * class `@Injectable({ scope: Scope.TRANSIENT })`, so Nest builds no instance at bootstrap, and the
 * object runtime builds each activation's instance through DI (`ModuleRef.resolve(Class)`, which
 * yields a new transient instance per call). Do not put `@Injectable()` above `@Spot`: it would make
 * the class a singleton again, and bootstrap refuses that with `Configuration`.
 *
 * A bad type throws `Configuration` when the class is defined; a duplicate (kind, type), a handler of
 * the other kind, or a missing object mesh / Location Store fails the bootstrap with `Configuration`.
 */
export function Spot(type: string, options: ObjectClassOptions = {}): ClassDecorator {
  return objectClassDecorator('spot', type, options);
}

/**
 * Declares an Actor class of type `type`; as `@Spot`, with `@ActorHandler` methods and no `@SpotSubscribe`.
 */
export function Actor(type: string, options: ObjectClassOptions = {}): ClassDecorator {
  return objectClassDecorator('actor', type, options);
}

function objectClassDecorator(kind: ObjectKind, type: string, options: ObjectClassOptions): ClassDecorator {
  const name = kind === 'spot' ? 'Spot' : 'Actor';
  return (target) => {
    const where = `@${name} on ${target.name}`;
    checkName(where, 'type', type);
    normalizeObjectClassOptions(where, options);
    if (Reflect.getMetadata(ZLINK_OBJECT_CLASS, target) !== undefined)
      throw configurationError(where, 'a class takes one @Spot or @Actor');
    // A copy, one level down too: the class's options are what they were when it was declared.
    const copied = options.persist
      ? { ...options, persist: Object.freeze({ ...options.persist }) }
      : { ...options };
    const metadata: ObjectClassMetadata = { kind, type, options: Object.freeze(copied) };
    Reflect.defineMetadata(ZLINK_OBJECT_CLASS, Object.freeze(metadata), target);
    Injectable({ scope: Scope.TRANSIENT })(target);
  };
}
