/**
 * The README and the docs shipped in the package are for users and stand alone (issue 14 §4): every
 * relative link resolves (anchors included), nothing points outside the repo, and no spec section
 * number appears (those belong in docs/decisions.md). The README's complete example is the file the
 * consumer test compiles and runs (`examples/quickstart/main.ts`), word for word, so it cannot rot.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/** Shipped in the package (package.json `files`), so a link from one of them must stay inside this set. */
const SHIPPED = ['README.md', 'LICENSE', 'docs/configuration.md', 'docs/errors.md', 'docs/operations.md'];
const read = (file: string): string => readFileSync(file, 'utf8');

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const line of withoutCode(markdown).split('\n')) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (heading) out.add(slug(heading[1]));
  }
  return out;
}

/** The text outside fenced code blocks (a `#` comment in a shell block is no heading, `](` in code no link). */
function withoutCode(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** Links of the text, with the heading above each (so a rule can depend on the section). */
function links(markdown: string): { target: string; section: string }[] {
  const out: { target: string; section: string }[] = [];
  let section = '';
  for (const line of withoutCode(markdown).split('\n')) {
    const heading = /^## (.*)$/.exec(line);
    if (heading) section = heading[1];
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ target: match[1], section });
  }
  return out;
}

/** The README's contributor part (from this heading on) may link to files of the repo that are not shipped. */
const CONTRIBUTING = 'Contributing';

describe('user docs', () => {
  it.each(SHIPPED.filter((f) => f.endsWith('.md')))(
    '%s: every link resolves inside the package or the repo',
    (file) => {
      const text = read(file);
      const problems: string[] = [];
      let contributing = false;
      for (const { target, section } of links(text)) {
        contributing ||= file === 'README.md' && section === CONTRIBUTING;
        if (/^[a-z]+:/i.test(target)) {
          problems.push(`${target}: a link outside the repo`);
          continue;
        }
        const [path, anchor] = target.split('#');
        const resolved = path === '' ? file : normalize(join(dirname(file), path));
        if (!existsSync(resolved)) problems.push(`${target}: no such file`);
        else if (!contributing && !SHIPPED.includes(resolved))
          problems.push(`${target}: not shipped in the package`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(read(resolved)).has(anchor)) {
          problems.push(`${target}: no heading with that anchor`);
        }
      }
      expect(problems).toEqual([]);
    },
  );

  it.each(SHIPPED.filter((f) => f.endsWith('.md')))('%s: no spec section numbers or spec paths', (file) => {
    const lines = read(file).split('\n');
    const offending = lines.filter((line) =>
      /§|shared\/spec|\.\.\/shared|spot-actor-routing|guide-how-channels/.test(line),
    );
    expect(offending).toEqual([]);
  });

  it("the README's complete example is examples/quickstart/main.ts, word for word", () => {
    const example = read('examples/quickstart/main.ts').trim();
    const blocks = [...read('README.md').matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((m) => m[1].trim());
    expect(blocks).toContain(example);
  });
});
