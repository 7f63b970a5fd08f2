/**
 * CONTRIBUTING.md's Layout names the tree as it is: every folder under `lib/`, at any depth, and no
 * folder that is gone; and the room orders it quotes are the floor plans the architecture test
 * enforces. A folder added, moved or removed without its line fails here, so the map a newcomer
 * reads first cannot go stale.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { read, sectionOf } from './markdown.js';
import { FLOOR_PLANS, floorPlanOrder } from '../unit/architecture-rules.js';

const LAYOUT = sectionOf(read('CONTRIBUTING.md'), 'Layout');

/** Every folder under `dir`, `dir` included, as `lib/a/b`. */
function foldersUnder(dir: string): string[] {
  const below = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => foldersUnder(join(dir, entry.name)));
  return [dir, ...below];
}

/** The folders a section names: code spans that start at `lib` and end in `/`, as `lib/a/b`. */
function namedFolders(markdown: string): string[] {
  return [...markdown.matchAll(/`(lib(?:\/[\w.-]+)*)\/`/g)].map((m) => m[1] as string);
}

/** The code spans of a section. */
function codeSpans(markdown: string): string[] {
  return [...markdown.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string);
}

describe("CONTRIBUTING.md's Layout", () => {
  it('finds what it looks for', () => {
    expect(LAYOUT).not.toBe('');
    const sample = '- `lib/spot/` — at its root `lib/spot/object-layer.ts`; rooms `lib/spot/wire/`, `wire`.';
    expect(namedFolders(sample)).toEqual(['lib/spot', 'lib/spot/wire']);
    expect(foldersUnder('lib')).toContain('lib/spot/owner');
  });

  it('names every folder under lib/, and only folders that exist', () => {
    const named = new Set(namedFolders(LAYOUT));
    const tree = new Set(foldersUnder('lib'));
    expect({
      unnamed: [...tree].filter((f) => !named.has(f)).sort(),
      gone: [...named].filter((f) => !tree.has(f)).sort(),
    }).toEqual({ unnamed: [], gone: [] });
  });

  it('quotes each floor plan the architecture test enforces, in its order', () => {
    const spans = codeSpans(LAYOUT);
    const missing = FLOOR_PLANS.map(floorPlanOrder).filter((order) => !spans.includes(order));
    expect(missing).toEqual([]);
  });
});
