/**
 * `directCall` decides once per class and method and binds each instance on its own: a Spot class's
 * activations share the decision, never each other's state.
 */
import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import type { ExternalContextCreator } from '@nestjs/core';
import { UseGuards } from '@nestjs/common';
import { directCall } from '../../../lib/nest/direct-call.js';
import { ZLinkPayload } from '../../../lib/nest/decorators/index.js';

const noGlobals = { getGlobalMetadata: () => [] };
const creator = (): ExternalContextCreator =>
  ({
    guardsContextCreator: noGlobals,
    interceptorsContextCreator: noGlobals,
    pipesContextCreator: noGlobals,
    filtersContextCreator: noGlobals,
  }) as unknown as ExternalContextCreator;

class Room {
  constructor(readonly name: string) {}

  greet(@ZLinkPayload() who: string): string {
    return `${this.name} greets ${who}`;
  }

  @UseGuards(class {})
  guarded(): string {
    return this.name;
  }
}

const ctx = {};

describe('directCall: one decision per class and method, one binding per instance', () => {
  it('binds every instance to itself, an own override included', () => {
    const contextCreator = creator();
    const a = new Room('a');
    const b = new Room('b');
    const c = Object.assign(new Room('c'), { greet: (who: string) => `override for ${who}` });
    expect(directCall(contextCreator, a, 'greet')?.('x', ctx)).toBe('a greets x');
    expect(directCall(contextCreator, b, 'greet')?.('y', ctx)).toBe('b greets y');
    expect(directCall(contextCreator, c, 'greet')?.('z', ctx)).toBe('override for z');
  });

  it('a method with a guard takes the full pipeline, for every instance', () => {
    const contextCreator = creator();
    expect(directCall(contextCreator, new Room('a'), 'guarded')).toBeUndefined();
    expect(directCall(contextCreator, new Room('b'), 'guarded')).toBeUndefined();
  });

  it('decides per context creator: global enhancers of one app do not leak into another', () => {
    const withGuard = {
      ...creator(),
      guardsContextCreator: { getGlobalMetadata: () => [{}] },
    } as unknown as ExternalContextCreator;
    expect(directCall(creator(), new Room('a'), 'greet')).toBeDefined();
    expect(directCall(withGuard, new Room('a'), 'greet')).toBeUndefined();
  });
});
