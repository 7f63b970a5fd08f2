import type { ExternalContextCreator, ModuleRef } from '@nestjs/core';
import type { HandlerFn } from '../core/calls/index.js';
import type { ObjectClassDescription, ObjectInstances } from '../core/objects/index.js';
import { nestHandler } from './nest-handler.js';

/**
 * Object instances through Nest (docs/architecture.md#public-surface): one transient instance per activation,
 * resolved by `ModuleRef.resolve` (constructor injection of the app's singletons), and handlers through
 * Nest's pipeline like channel handlers. @internal
 */
export class NestObjectInstances implements ObjectInstances {
  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly contextCreator: ExternalContextCreator,
  ) {}

  create(cls: ObjectClassDescription): Promise<object> {
    // A transient provider resolves to a new instance on every call, each with its own dependency sub-tree.
    return this.moduleRef.resolve(cls.token as new () => object, undefined, { strict: false });
  }

  handler(instance: object, _cls: ObjectClassDescription, method: string): HandlerFn {
    return nestHandler(this.contextCreator, instance, method);
  }
}
