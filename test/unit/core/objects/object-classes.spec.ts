/**
 * What the Nest explorer refuses when it registers `@Spot` / `@Actor` classes, as pure rules: the
 * class registry (a class declared twice, a handler on one of the runtime's own packets) and the
 * startup check against the options (no Location Store, a relocatable class without a Relocation
 * Store, no mesh that hosts objects). Each fails `Configuration`, naming the class and the option.
 */
import { describe, expect, it } from '@jest/globals';
import {
  RUNTIME_PACKET_PREFIX,
  type ZLinkOptions,
  ZLinkError,
  checkObjectClasses,
  normalizeOptions,
} from '../../../../lib/core/index.js';
import { MemoryLocationStore } from '../../../../lib/store/memory/memory-location-store.js';
import { objectClass, objectMeshOptions, registry } from '../../../integration/spot/harness.js';

class Room {
  ping(): string {
    return 'pong';
  }
}

function refusal(run: () => void): ZLinkError {
  try {
    run();
  } catch (error) {
    if (error instanceof ZLinkError) return error;
    throw error;
  }
  throw new Error('expected a ZLinkError');
}

const rooms = () => registry(objectClass('spot', 'room', Room, ['ping']));
const check =
  (options: ZLinkOptions, classes = rooms()) =>
  () =>
    checkObjectClasses(normalizeOptions(options), classes);

describe('object classes: the registry', () => {
  it('a type declared twice is refused, naming both declarations', () => {
    const e = refusal(() =>
      registry(objectClass('spot', 'room', Room, ['ping']), objectClass('spot', 'room', Room, [])),
    );
    expect(e.code).toBe('Configuration');
    expect(e.message).toContain("@Spot('room')");
    expect(e.message).toContain('declared twice: Room and Room');
    // The same type as an Actor is another class.
    expect(() =>
      registry(objectClass('spot', 'room', Room, []), objectClass('actor', 'room', Room, [])),
    ).not.toThrow();
  });

  it("a handler on one of the runtime's own packets is refused", () => {
    const e = refusal(() => registry(objectClass('spot', 'room', Room, [`${RUNTIME_PACKET_PREFIX}flush`])));
    expect(e.code).toBe('Configuration');
    expect(e.message).toContain(`packets starting '${RUNTIME_PACKET_PREFIX}' are the runtime's own`);
  });
});

describe('object classes: the startup check against the options', () => {
  const store = new MemoryLocationStore();

  it('passes with a Location Store and a mesh with objectRole server; nothing to check without classes', () => {
    expect(check(objectMeshOptions(store, 'server', 'srv'))).not.toThrow();
    expect(check({}, registry())).not.toThrow();
  });

  it('no Location Store: refused, naming the class', () => {
    const e = refusal(check({ meshes: { objects: { rid: 'n', objectRole: 'none' } } }));
    expect(e.message).toMatch(/^@Spot\('room'\) Room: object classes need the locationStore option/);
  });

  it("a mesh with objectRole 'client' only: refused, naming that mesh's objectRole", () => {
    const e = refusal(check(objectMeshOptions(store, 'client', 'cli')));
    expect(e.message).toContain(
      "meshes.objects.objectRole is 'client'; hosting objects needs objectRole 'server'",
    );
  });

  it('a relocatable class without a Relocation Store: refused, naming relocationStore', () => {
    const moving = objectClass('spot', 'room', Room, ['ping']);
    const e = refusal(
      check(
        objectMeshOptions(store, 'server', 'srv'),
        registry({ ...moving, options: { relocatable: true } }),
      ),
    );
    expect(e.details).toEqual({ field: 'relocationStore' });
  });
});
