/**
 * The code and the docs cite our own pages, never a document outside the repository: no `§` section
 * number and no spec file name in the sources, the samples, the benches, the tests or the docs (a
 * maintainer who clones the repository cannot follow them, and a user reading an error message
 * even less), and every `docs/<page>.md#<anchor>` they link to names a heading (by GitHub's slug
 * rules) or an `<a id>` of that page, so a link sends its reader to the section that says the thing.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { PAGES, anchorsOf, read, slug, withoutCode } from './markdown.js';

/** The trees and pages checked; a folder is read whole, recursively. */
const CHECKED: readonly string[] = ['lib', 'sample', 'bench', 'test', 'docs', 'README.md', 'CONTRIBUTING.md'];

/** Files that name what they look for. */
const LOOKING_FOR: readonly string[] = ['test/docs/section-refs.spec.ts', 'test/docs/user-docs.spec.ts'];

/** The names of the outside documents the code used to cite. */
const SPEC_NAMES: readonly string[] = [
  'spot-actor-routing',
  '02-channel-messaging',
  'guide-how-channels-work',
  '03-clientserver',
];

const TEXT = /\.(ts|mts|mjs|js|md|json|sh)$/;

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return (readdirSync(path, { recursive: true }) as string[])
    .map((f) => join(path, f))
    .filter((f) => TEXT.test(f) && !f.includes('node_modules') && statSync(f).isFile());
}

const FILES: readonly string[] = CHECKED.flatMap(filesUnder).filter((f) => !LOOKING_FOR.includes(f));

/** `file:line: text` for every line of the checked files that `hit` says is wrong. */
function offending(hit: (line: string) => boolean): string[] {
  return FILES.flatMap((file) =>
    read(file)
      .split('\n')
      .flatMap((text, i) => (hit(text) ? [`${file}:${i + 1}: ${text.trim()}`] : [])),
  );
}

interface Link {
  readonly from: string;
  readonly page: string;
  readonly anchor: string;
}

/**
 * The links to a section of a docs page: `docs/<page>.md#<anchor>` anywhere in a source or a page,
 * and in a page also the Markdown links `](<page>.md#<anchor>)` and `](#<anchor>)`, resolved from it.
 */
function sectionLinks(file: string): Link[] {
  const text = read(file);
  const out: Link[] = [];
  for (const m of text.matchAll(/(?<![\w./-])docs\/([\w-]+\.md)#([\w-]+)/g))
    out.push({ from: file, page: `docs/${m[1] as string}`, anchor: m[2] as string });
  if (file.endsWith('.md')) {
    for (const m of withoutCode(text).matchAll(/\]\(([^)\s#]*)#([^)\s]+)\)/g)) {
      const target = m[1] as string;
      if (/^[a-z]+:/.test(target)) continue;
      const page = target === '' ? file : normalize(join(dirname(file), target));
      if (page.endsWith('.md')) out.push({ from: file, page, anchor: m[2] as string });
    }
  }
  return out;
}

describe('section references', () => {
  it('no § section number of another document remains', () => {
    expect(offending((line) => line.includes('§'))).toEqual([]);
  });

  it('no spec file is named', () => {
    expect(offending((line) => SPEC_NAMES.some((name) => line.includes(name)))).toEqual([]);
  });

  it('the code cites no outside document by a bare name ("the spec", "(guide: ...)", "DESIGN")', () => {
    const cites = /\bthe spec\b|\bthe guide\b|\(guide\b|\bDESIGN\b/i;
    const code = (file: string) => file.startsWith('lib/') || file.startsWith('sample/');
    expect(offending((line) => cites.test(line)).filter((hit) => code(hit))).toEqual([]);
  });

  it('every link to a docs section names a heading or an <a id> of that page', () => {
    const anchors = new Map<string, Set<string>>();
    const broken: string[] = [];
    const sources = [...new Set([...FILES, ...PAGES])];
    const links = sources.flatMap(sectionLinks);
    // The scan sees the links the code and the docs hold (some hundreds), not an empty set.
    expect(links.length).toBeGreaterThan(200);
    for (const link of links) {
      if (!anchors.has(link.page))
        anchors.set(link.page, existsSync(link.page) ? anchorsOf(read(link.page)) : new Set());
      if (!anchors.get(link.page)?.has(link.anchor)) broken.push(`${link.from}: ${link.page}#${link.anchor}`);
    }
    expect(broken).toEqual([]);
  });

  it('finds what it looks for (the slug rules on headings the docs use)', () => {
    expect(slug('Message Follow')).toBe('message-follow');
    expect(slug('meshes.\\<mesh\\>.channels.\\<channel\\>')).toBe('meshesmeshchannelschannel');
    expect(slug('Object message records (issue 16, `lib/spot/wire/object-wire.ts`)')).toBe(
      'object-message-records-issue-16-libspotwireobject-wirets',
    );
    expect(slug('"May it have run?"')).toBe('may-it-have-run');
    expect([...anchorsOf('# A\n## B\n## B\n<a id="x"></a>\n```\n## C\n```\n')]).toEqual([
      'a',
      'b',
      'b-1',
      'x',
    ]);
  });
});
