import { describe, expect, it } from '@jest/globals';
import { configError, fieldOf } from '../config-error.js';
import { normalizeOptions } from '../../../../lib/core/index.js';
import { MemoryLocationStore, MemoryRelocationStore } from '../../../../lib/store/index.js';

/**
 * The `locationStore` option and what needs it (docs/protocol.md#location-store): exactly one store, registered
 * by the user; automatic discovery or an object role without one fails before any socket opens.
 */
describe('locationStore', () => {
  it('normalizes a Redis store with its defaults', () => {
    const o = normalizeOptions({ locationStore: { redis: 'redis://127.0.0.1:6379' } });
    expect(o.locationStore).toEqual({
      source: { kind: 'redis', redis: 'redis://127.0.0.1:6379' },
      keyPrefix: 'zlink',
      lease: { ttlMs: 10000, refreshMs: 3000, refreshTimeoutMs: 2000, marginMs: 1000 },
      fullReadIntervalMs: 5000,
      startupTimeoutMs: 10000,
    });
    expect(normalizeOptions({}).locationStore).toBeUndefined();
  });

  it('takes a store instance only when given one (the memory store is opt-in)', () => {
    const instance = new MemoryLocationStore();
    const o = normalizeOptions({ locationStore: { instance, keyPrefix: 'p', fullReadIntervalMs: 250 } });
    expect(o.locationStore?.source).toEqual({ kind: 'instance', instance });
    expect(o.locationStore?.fullReadIntervalMs).toBe(250);
  });

  it.each<[string, unknown, string]>([
    ['not an object', 'redis://x', 'locationStore'],
    ['no store', { keyPrefix: 'p' }, 'names no store'],
    ['two stores', { redis: 'redis://h', instance: new MemoryLocationStore() }, 'exactly one'],
    ['an unknown key', { redis: 'redis://h', ttl: 5 }, 'locationStore.ttl'],
    ['a URL that is not redis://', { redis: 'http://h' }, 'locationStore.redis'],
    ['a cluster without nodes', { cluster: { nodes: [] } }, 'locationStore.cluster'],
    ['an instance that is no store', { instance: { put: () => 1 } }, 'locationStore.instance'],
    ['a key prefix with a hash tag', { redis: 'redis://h', keyPrefix: 'a{b}' }, 'locationStore.keyPrefix'],
    [
      'a lease whose parts add up past ttl',
      { redis: 'redis://h', lease: { ttlMs: 5000 } },
      'locationStore.lease',
    ],
    [
      'a bad full-read interval',
      { redis: 'redis://h', fullReadIntervalMs: 0 },
      'locationStore.fullReadIntervalMs',
    ],
    [
      'a negative startup wait',
      { redis: 'redis://h', startupTimeoutMs: -1 },
      'locationStore.startupTimeoutMs',
    ],
  ])('%s fails naming %s', (_what, locationStore, text) => {
    expect(configError({ locationStore }).message).toContain(text);
  });
});

/**
 * The `relocationStore` option (issue 17 item 5, docs/protocol.md#relocation-store): registered apart from the Location
 * Store, which it needs, with a key prefix of its own; only validated so far.
 */
describe('relocationStore', () => {
  const locationStore = { redis: 'redis://127.0.0.1:6379' };

  it('normalizes a Redis store with its own default prefix; none when not given', () => {
    const o = normalizeOptions({ locationStore, relocationStore: { redis: 'redis://127.0.0.1:6379' } });
    expect(o.relocationStore).toEqual({
      source: { kind: 'redis', redis: 'redis://127.0.0.1:6379' },
      keyPrefix: 'zlink-relocation',
    });
    expect(Object.isFrozen(o.relocationStore)).toBe(true);
    expect(normalizeOptions({ locationStore }).relocationStore).toBeUndefined();
  });

  it('takes a Relocation Store instance or a cluster', () => {
    const instance = new MemoryRelocationStore();
    expect(
      normalizeOptions({ locationStore, relocationStore: { instance } }).relocationStore?.source,
    ).toEqual({
      kind: 'instance',
      instance,
    });
    const cluster = { nodes: ['redis://h:7000'] };
    expect(
      normalizeOptions({ locationStore, relocationStore: { cluster, keyPrefix: 'moves' } }).relocationStore,
    ).toEqual({ source: { kind: 'cluster', nodes: cluster.nodes, options: undefined }, keyPrefix: 'moves' });
  });

  it.each<[string, unknown, string]>([
    ['not an object', 'redis://x', 'relocationStore'],
    ['no store', { keyPrefix: 'p' }, 'relocationStore'],
    ['two stores', { redis: 'redis://h', instance: new MemoryRelocationStore() }, 'relocationStore'],
    ['a lease (the Location Store’s)', { redis: 'redis://h', lease: {} }, 'relocationStore.lease'],
    ['a URL that is not redis://', { redis: 'http://h' }, 'relocationStore.redis'],
    ['a Location Store as its instance', { instance: new MemoryLocationStore() }, 'relocationStore.instance'],
    ['a key prefix with a hash tag', { redis: 'redis://h', keyPrefix: '{x}' }, 'relocationStore.keyPrefix'],
  ])('%s fails naming %s', (_what, relocationStore, field) => {
    expect(fieldOf(configError({ locationStore, relocationStore }))).toBe(field);
  });

  it('two registrations in one option are refused as for the Location Store', () => {
    const e = configError({
      locationStore,
      relocationStore: { redis: 'redis://h', cluster: { nodes: [1] } },
    });
    expect(e.message).toContain('exactly one Relocation Store');
  });

  it('needs a locationStore', () => {
    const e = configError({ relocationStore: { redis: 'redis://h' } });
    expect(fieldOf(e)).toBe('relocationStore');
    expect(e.message).toContain('locationStore');
  });

  it('may share the Redis but not the key prefix', () => {
    const same = configError({
      locationStore: { ...locationStore, keyPrefix: 'shop' },
      relocationStore: { ...locationStore, keyPrefix: 'shop' },
    });
    expect(fieldOf(same)).toBe('relocationStore.keyPrefix');
    const defaults = configError({
      locationStore,
      relocationStore: { redis: 'redis://h', keyPrefix: 'zlink' },
    });
    expect(fieldOf(defaults)).toBe('relocationStore.keyPrefix');
    expect(
      normalizeOptions({
        locationStore: { ...locationStore, keyPrefix: 'shop' },
        relocationStore: locationStore,
      }).relocationStore?.keyPrefix,
    ).toBe('zlink-relocation');
  });
});

describe('what needs a store', () => {
  const store = { redis: 'redis://127.0.0.1:6379' };

  it("a ClientServer client with discovery 'auto' needs one, and then needs no endpoint", () => {
    const billing = { client: { discovery: 'auto' as const } };
    expect(configError({ clientServer: { billing } }).message).toContain(
      'clientServer.billing.client.discovery',
    );
    const o = normalizeOptions({ locationStore: store, clientServer: { billing } });
    expect(o.clientServer.get('billing')?.client).toEqual({ connect: [], discovery: 'auto' });
    expect(
      configError({ clientServer: { billing: { client: { discovery: 'sometimes' } } } }).message,
    ).toContain('clientServer.billing.client.discovery');
  });

  it("a MeshNode with discovery 'auto' or an object role needs one", () => {
    const o = normalizeOptions({
      locationStore: store,
      meshes: { game: { discovery: 'auto', objectRole: 'server' } },
    });
    expect(o.meshes.get('game')).toMatchObject({ discovery: 'auto', objectRole: 'server' });
    expect(normalizeOptions({ meshes: { game: {} } }).meshes.get('game')?.discovery).toBe('manual');
  });
});
