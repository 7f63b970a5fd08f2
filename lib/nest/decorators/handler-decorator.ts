import { configurationError } from '../../core/errors.js';
import type { MessageKind } from '../../core/calls/index.js';

/**
 * What the method decorators share (`@ChannelHandler`, `@NodeHandler`, `@FanoutHandler`, `@SpotHandler`,
 * `@ActorHandler`; the object ones have no scope argument): argument checks at class definition (a bad one
 * throws `Configuration` naming the decorator and method) and appending one entry to the method's list under
 * `metadataKey`. @internal
 */
export function handlerDecorator<E>(
  decorator: string,
  metadataKey: string,
  scope: { readonly name: string; readonly value: string } | undefined,
  packetName: string,
  kind: MessageKind,
  entry: E,
): MethodDecorator {
  return methodDecorator(decorator, metadataKey, entry, (where) => {
    if (scope) checkName(where, scope.name, scope.value);
    checkName(where, 'packetName', packetName);
    if (kind !== 'request' && kind !== 'send') {
      throw configurationError(where, `kind must be 'request' or 'send', got ${JSON.stringify(kind)}`);
    }
  });
}

/**
 * A method decorator that runs `check(where)` when the class is defined (it throws `Configuration`
 * naming `@decorator on Class.method`) and appends `entry` to the method's list under `metadataKey`.
 * @internal
 */
export function methodDecorator<E>(
  decorator: string,
  metadataKey: string,
  entry: E,
  check: (where: string) => void,
): MethodDecorator {
  return (target, key, descriptor) => {
    const where = `@${decorator} on ${(target as { constructor: { name: string } }).constructor.name}.${String(key)}`;
    check(where);
    const method = descriptor.value as object | undefined;
    if (typeof method !== 'function') throw configurationError(where, 'must decorate a method');
    const list = (Reflect.getMetadata(metadataKey, method) as E[] | undefined) ?? [];
    Reflect.defineMetadata(metadataKey, [...list, Object.freeze(entry)], method);
    return descriptor;
  };
}

export function checkName(where: string, what: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0 || value.includes('\0')) {
    throw configurationError(
      where,
      `${what} must be a non-empty string without NUL, got ${JSON.stringify(value)}`,
    );
  }
}
