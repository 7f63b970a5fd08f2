/**
 * The README stays a user's first page (issue 52): short, the commands a newcomer needs right after the
 * first example and before any arrangement, and each arrangement a short section that links to the docs
 * page holding the rest. What is long lives in docs/ (performance, coming from Nest, the arrangements
 * in detail). CI runs the README's own set-up and test commands, and CHANGELOG.md keeps an Unreleased
 * section for the next change to add its line to.
 */
import { describe, expect, it } from '@jest/globals';
import { read, sectionOf, withoutCode } from './markdown.js';

const README = read('README.md');
const MAX_LINES = 300;
/** The longest an arrangement's section may grow (heading and blank lines included). */
const MAX_SECTION_LINES = 30;

/** The fenced `sh` blocks of `markdown`, with their offsets. */
const shBlocks = (markdown: string): { at: number; body: string }[] =>
  [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => ({ at: m.index, body: m[1] as string }));

/** The commands of a shell block: each line without its comment, split on `&&`. */
const commands = (block: string): string[] =>
  block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '')
    .flatMap((line) => line.split('&&').map((c) => c.trim()));

/** The README's block of set-up commands: the one that runs scripts/setup.sh. */
const setup = shBlocks(README).find((b) => commands(b.body).includes('scripts/setup.sh'));

/** The README's sections the arrangements table points at, by heading, in the order they appear. */
function arrangementSections(): string[] {
  const table = sectionOf(README, 'Which arrangement do I need?');
  const anchors = [...table.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1] as string);
  const headings = [...withoutCode(README).matchAll(/^## (.*)$/gm)].map((m) => m[1] as string);
  const slug = (h: string): string =>
    h
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
  return headings.filter((h) => anchors.includes(slug(h)));
}

describe('README.md', () => {
  it(`is at most ${MAX_LINES} lines`, () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(MAX_LINES);
  });

  it('has the set-up, demo and test commands in one block', () => {
    expect(setup).toBeDefined();
    expect(commands(setup?.body ?? '')).toEqual(['scripts/setup.sh', 'npm run demo', 'npm test']);
  });

  it('puts them after the complete example and before the arrangements table and every arrangement', () => {
    const example = README.indexOf(read('examples/quickstart/main.ts').trim());
    const sections = arrangementSections();
    expect(sections.length).toBeGreaterThanOrEqual(7);
    expect(example).toBeGreaterThan(0);
    expect(setup?.at).toBeGreaterThan(example);
    const after = ['Which arrangement do I need?', ...sections].map((h) => README.indexOf(`\n## ${h}\n`));
    expect(after.filter((at) => at < (setup?.at ?? Infinity))).toEqual([]);
  });

  it('gives each arrangement a short section that links to its docs page', () => {
    const problems = arrangementSections().flatMap((heading) => {
      const section = sectionOf(README, heading);
      const lines = section.trim().split('\n').length;
      return [
        ...(lines > MAX_SECTION_LINES ? [`${heading}: ${lines} lines`] : []),
        ...(/\]\(docs\/[\w-]+\.md(#[\w-]+)?\)/.test(section) ? [] : [`${heading}: no link to docs/`]),
      ];
    });
    expect(problems).toEqual([]);
  });

  it('has its set-up and test commands run by CI, as written', () => {
    const ci = read('.ci/run').split('\n');
    const wanted = commands(setup?.body ?? '').filter((c) => c !== 'npm run demo');
    expect(wanted).toEqual(['scripts/setup.sh', 'npm test']);
    expect(wanted.filter((c) => !ci.includes(c))).toEqual([]);
  });
});

describe('CHANGELOG.md', () => {
  const changelog = read('CHANGELOG.md');
  const version = (JSON.parse(read('package.json')) as { version: string }).version;

  it("has an Unreleased section first, then the package's version", () => {
    const sections = [...changelog.matchAll(/^## \[([^\]]+)\]/gm)].map((m) => m[1]);
    expect(sections[0]).toBe('Unreleased');
    expect(sections).toContain(version);
  });
});
