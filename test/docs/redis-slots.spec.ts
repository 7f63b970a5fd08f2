/**
 * The docs name the Redis hash slots the stores really write: every `{<kind>:<scope>}` in README.md,
 * CONTRIBUTING.md or a docs/*.md page (prose or code) is one the key layouts produce — a descriptor
 * kind's (`StoreKeys`) or an object store's (`ObjectStoreKeys`: the Authority Store's records sit in
 * the `{mesh-node:<mesh>}` slot, the Relocation Store's in `{relocation:<mesh>}`). An operator who
 * looks for a slot the page names and finds none is misled (issue 51: `{authority:<mesh>}`).
 */
import { describe, expect, it } from '@jest/globals';
import type { DescriptorKind } from '../../lib/core/index.js';
import { StoreKeys } from '../../lib/store/redis/keys.js';
import { ObjectStoreKeys } from '../../lib/store/redis/object-keys.js';
import { PAGES, read } from './markdown.js';

/** `{kind:` of a key: what names the slot (a placeholder such as `{<kind>:<scope>}` names none). */
const SLOT = /\{([a-z][a-z-]*):[^{}\s`]+\}/g;

/** The slot kinds the stores' key layouts produce, read from the layouts themselves. */
function writtenSlotKinds(): Set<string> {
  const kinds: DescriptorKind[] = ['mesh-node', 'server', 'publisher'];
  const keys = [
    ...kinds.map((kind) => new StoreKeys('p').slot(kind, 's')),
    new ObjectStoreKeys('p', 'authority').slot('m'),
    new ObjectStoreKeys('p', 'relocation').slot('m'),
  ];
  return new Set(keys.flatMap((key) => [...key.matchAll(SLOT)].map((m) => m[1] as string)));
}

describe('Redis slots the docs name', () => {
  it('are slots the stores write', () => {
    const written = writtenSlotKinds();
    expect([...written].sort()).toEqual(['mesh-node', 'publisher', 'relocation', 'server']);
    const unknown: string[] = [];
    for (const page of PAGES)
      read(page)
        .split('\n')
        .forEach((text, i) => {
          for (const match of text.matchAll(SLOT))
            if (!written.has(match[1] as string)) unknown.push(`${page}:${i + 1}: ${match[0]}`);
        });
    expect(unknown).toEqual([]);
  });
});
