import { describe, expect, it } from '@jest/globals';
import { type AuthorityStore, type NodeRun } from '../../../lib/core/index.js';
import { MemoryLocationStore } from '../../../lib/store/memory/memory-location-store.js';
import { objectClass, registry } from '../../integration/objects/harness.js';
import { objectHost } from './fixtures.js';

/** Guide §6.2 on the owner: after a fence, admission opens only once the latest re-check has read every object. */

const SELF: NodeRun = { rid: 'node-a', nodeGeneration: 'ga1' };

class Room {
  ping(): string {
    return 'pong';
  }
}

/** An Authority Store whose reads wait, while `held`, until the test lets each one go (in order). */
interface SlowReads {
  held: boolean;
  readonly store: AuthorityStore;
  next(): void;
  waiting(): number;
}

function slowReads(inner: AuthorityStore): SlowReads {
  const queue: (() => void)[] = [];
  const view: SlowReads = {
    held: false,
    store: {
      get: async (key) => {
        if (view.held) await new Promise<void>((r) => queue.push(r));
        return inner.get(key);
      },
      compareAndSet: (key, expected, next) => inner.compareAndSet(key, expected, next),
      delete: (key, expected) => inner.delete(key, expected),
      takeOver: (key, expected, next, previous) => inner.takeOver(key, expected, next, previous),
      listByOwner: (mesh, rid) => inner.listByOwner(mesh, rid),
      close: () => inner.close(),
    },
    next: () => queue.shift()?.(),
    waiting: () => queue.length,
  };
  return view;
}

async function until(probe: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !probe(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(probe()).toBe(true);
}

describe('ObjectHost.leaseRegained', () => {
  it('a pass overtaken by a newer fence does not open admission; the newer pass does', async () => {
    const reads = slowReads(new MemoryLocationStore().authorityStore());
    let leaseFenced = false;
    const host = objectHost(SELF, registry(objectClass('spot', 'room', Room, ['ping'])), {
      store: reads.store,
      leaseFenced: () => leaseFenced,
    });
    await host.activate('spot', 'room', 'x', 'create', undefined, 5000);
    reads.held = true;

    // Fenced, back: the first pass reads x (slowly).
    leaseFenced = true;
    leaseFenced = false;
    const first = host.leaseRegained();
    await until(() => reads.waiting() === 1);
    // Fenced and back again while that read is out: a second pass starts.
    leaseFenced = true;
    leaseFenced = false;
    const second = host.leaseRegained();
    await until(() => reads.waiting() === 2);

    reads.next(); // the first pass's read answers: that pass is stale and must leave admission shut
    await first;
    expect(host.fenced).toBe(true);
    reads.next();
    await second;
    expect(host.fenced).toBe(false);
    expect(host.get('spot', 'x')?.state).toBe('ready');
    await host.close();
  });
});
