/**
 * The docs point at real things: every path of the repository that README.md, CONTRIBUTING.md or a
 * docs/*.md names under `lib/`, `test/`, `sample/`, `docs/`, `examples/`, `bench/` or `clients/` — in prose, a code
 * span, a code block or a link — exists. Files move; a page that names the old place sends a reader
 * nowhere. A `*` or `{a,b}` must match at least one file. As in the sources' own imports, `x.js` names
 * the script compiled from `x.ts` beside it. An output the repository ignores (`bench/results/*.json`,
 * written by `npm run bench`) counts when its folder exists.
 */
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PAGES, read } from './markdown.js';

/** A repository path: one of the folders, not inside another path, a URL or a package name. */
const PATH = /(?<![\w.@/~-])((?:lib|test|sample|docs|examples|bench|clients)\/[\w.*{},/-]*)/g;

/** The repository paths `markdown` names, each with its line. */
function namedPaths(markdown: string): { path: string; line: number }[] {
  const out: { path: string; line: number }[] = [];
  markdown.split('\n').forEach((text, i) => {
    for (const match of text.matchAll(PATH))
      out.push({ path: (match[1] as string).replace(/[.,:;]+$/, ''), line: i + 1 });
  });
  return out;
}

/** `a/{b,c}/d` as `a/b/d` and `a/c/d`. */
function expandBraces(path: string): string[] {
  const match = /\{([^{}]*)\}/.exec(path);
  if (!match) return [path];
  return (match[1] as string).split(',').flatMap((choice) => expandBraces(path.replace(match[0], choice)));
}

function matchesAFile(pattern: string): boolean {
  const fixed = pattern.slice(0, pattern.indexOf('*')).replace(/[^/]*$/, '');
  if (!existsSync(fixed || '.')) return false;
  const re = new RegExp(`^${pattern.replace(/[.+?^$()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}/?$`);
  const files = readdirSync(fixed || '.', { recursive: true }) as string[];
  return files.some((f) => re.test(`${fixed}${f}`));
}

const ignoredByGit = (path: string): boolean => {
  try {
    execFileSync('git', ['check-ignore', '-q', path]);
    return true;
  } catch {
    return false;
  }
};

function exists(path: string): boolean {
  return expandBraces(path).every((p) => {
    if (p.includes('*')) return matchesAFile(p);
    if (existsSync(p)) return true;
    if (p.endsWith('.js') && existsSync(`${p.slice(0, -3)}.ts`)) return true;
    return existsSync(dirname(p)) && ignoredByGit(p);
  });
}

describe('paths the docs name', () => {
  it('are found in prose, code spans, code blocks and links, not in URLs or package names', () => {
    const markdown = [
      'See lib/core/wire/ and `test/helpers/index.ts`, or [the example](examples/quickstart/main.ts).',
      '```sh',
      'node .bench-build/bench/run.js  # bench/run.ts',
      '```',
      'Not https://example.com/lib/x.ts, nor @scope/docs/x, nor ../docs/x.md.',
    ].join('\n');
    expect(namedPaths(markdown).map(({ path }) => path)).toEqual([
      'lib/core/wire/',
      'test/helpers/index.ts',
      'examples/quickstart/main.ts',
      'bench/run.ts',
    ]);
    expect(exists('lib/core/wire/session-*.ts')).toBe(true);
    expect(exists('lib/{core,spot}/index.ts')).toBe(true);
    expect(exists('bench/run.js')).toBe(true);
    expect(exists('lib/core/options.ts')).toBe(false);
    expect(exists('lib/core/{options,nothing}/index.ts')).toBe(false);
  });

  it.each(PAGES)('%s names only paths that exist', (page) => {
    const missing = namedPaths(read(page)).filter(({ path }) => !exists(path));
    expect(missing.map(({ path, line }) => `${page}:${line} ${path}`)).toEqual([]);
  });
});
