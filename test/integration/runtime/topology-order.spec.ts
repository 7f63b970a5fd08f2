/**
 * The order ZLinkRuntime walks its topologies (lib/runtime/topology.ts), with all three in one
 * process and a Location Store: every listener is bound before the first descriptor is written, each
 * descriptor names the endpoint that is listening, discovery reads only after the descriptors were
 * written, and a close removes every descriptor.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { DescriptorKind, LocationDescriptor, PutResult } from '../../../lib/core/index.js';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { MemoryLocationStore } from '../../../lib/store/index.js';
import { Cleanup } from '../../helpers/index.js';

/** The memory store, writing down each call in the order it came (shared with the runtime's events). */
class RecordingStore extends MemoryLocationStore {
  constructor(private readonly log: string[]) {
    super();
  }

  override put(descriptor: LocationDescriptor, leaseMs: number): Promise<PutResult> {
    this.log.push(`put ${descriptor.kind} ${descriptor.endpoint}`);
    return super.put(descriptor, leaseMs);
  }

  override list(kind: DescriptorKind, scope: string): Promise<LocationDescriptor[]> {
    this.log.push(`list ${kind} ${scope}`);
    return super.list(kind, scope);
  }

  override watch(kind: DescriptorKind, scope: string, onChange: () => void): Promise<() => Promise<void>> {
    this.log.push(`watch ${kind} ${scope}`);
    return super.watch(kind, scope, onChange);
  }
}

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

describe('ZLinkRuntime start order over ClientServer, RouteMesh and fanout', () => {
  it('binds every listener, then publishes every descriptor, then discovers; close removes them', async () => {
    const log: string[] = [];
    const store = new RecordingStore(log);
    const runtime = cleanup.add(
      new ZLinkRuntime({
        locationStore: { instance: store },
        clientServer: { billing: { server: {}, client: { discovery: 'auto' } } },
        meshes: { game: { discovery: 'auto', channels: { match: { role: 'server' } } } },
        fanout: { news: { publisher: {}, subscriber: { discovery: 'auto', topics: ['t'] } } },
      }),
    );
    runtime.events.subscribe((e) => {
      if (e.type === 'listening') log.push(`listening ${e.endpoint}`);
    });
    await runtime.start();

    const at = (prefix: string) => log.flatMap((line, i) => (line.startsWith(prefix) ? [i] : []));
    const listening = at('listening ');
    const puts = at('put ');
    const reads = [...at('list '), ...at('watch ')];
    expect(listening).toHaveLength(3);
    expect(puts).toHaveLength(3);
    expect(Math.max(...listening)).toBeLessThan(Math.min(...puts));
    expect(Math.max(...puts)).toBeLessThan(Math.min(...reads));
    // Each descriptor names an endpoint that was already listening.
    const endpoints = listening.map((i) => (log[i] as string).slice('listening '.length)).sort();
    expect(puts.map((i) => (log[i] as string).split(' ')[2]).sort()).toEqual(endpoints);
    expect(log.filter((line) => line.startsWith('watch ')).sort()).toEqual([
      'watch mesh-node game',
      'watch publisher news',
      'watch server billing',
    ]);

    await runtime.close();
    for (const [kind, scope] of [
      ['server', 'billing'],
      ['mesh-node', 'game'],
      ['publisher', 'news'],
    ] as const) {
      expect(await store.list(kind, scope)).toEqual([]);
    }
  });
});
