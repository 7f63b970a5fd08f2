/**
 * The State Store contract on `MemoryStateStore` (issue 54): `n` handles are the one store `n` times, as
 * a process holds it. Its rows are written by no one else, so the unreadable-row case does not apply.
 */
import { describe, expect, it } from '@jest/globals';
import { MemoryStateStore } from '../../../lib/store/index.js';
import { stateStoreContract } from './state-store-contract.js';

stateStoreContract({
  name: 'MemoryStateStore',
  handles: (n, { tombstoneTtlMs }) => {
    const store = new MemoryStateStore({ tombstoneTtlMs });
    return Array.from({ length: n }, () => store);
  },
});

describe('MemoryStateStore options', () => {
  it('names itself, and refuses a name or tombstone time it cannot take, naming the option', () => {
    expect(new MemoryStateStore().name).toBe("State Store 'memory' (memory)");
    expect(new MemoryStateStore({ name: 'players' }).name).toBe("State Store 'players' (memory)");
    expect(() => new MemoryStateStore({ name: '' })).toThrow(/MemoryStateStore options\.name/);
    for (const tombstoneTtlMs of [0, 1.5, -1, Number.NaN])
      expect(() => new MemoryStateStore({ tombstoneTtlMs })).toThrow(
        expect.objectContaining({
          code: 'Configuration',
          message: expect.stringMatching(/options\.tombstoneTtlMs/),
        }),
      );
  });
});
