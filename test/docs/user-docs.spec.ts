/**
 * The README and the docs shipped in the package are for users and stand alone (issue 14 item 4): every
 * relative link resolves (anchors included), nothing points outside the repo, and no spec section
 * number appears (those belong in docs/decisions.md). The README's complete example is the file the
 * consumer test compiles and runs (`examples/quickstart/main.ts`), word for word, so it cannot rot;
 * likewise every TypeScript snippet about Spots and Actors is a run of lines of the objects examples
 * (`examples/objects/rooms.ts`, `moving-rooms.ts`, `room-news.ts`), which typecheck compiles and tests run;
 * so is every CURVE snippet, of `examples/security/curve-mesh.ts`, and every sessions snippet, of
 * `examples/sessions/game-gateway.ts`, `tls-gateway.ts` or `behind-a-proxy.ts`.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { isRunOf, read, sectionOf, tsBlocks, withoutCode } from './markdown.js';

/** Shipped in the package (package.json `files`), so a link from one of them must stay inside this set. */
const SHIPPED = [
  'README.md',
  'LICENSE',
  'docs/arrangements.md',
  'docs/coming-from-nest.md',
  'docs/configuration.md',
  'docs/errors.md',
  'docs/objects.md',
  'docs/operations.md',
  'docs/performance.md',
  'docs/sessions.md',
  'docs/sessions-wire.md',
];

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

  it("every TypeScript snippet of docs/objects.md and of the README's Spots and Actors section is a run of lines of examples/objects/rooms.ts, moving-rooms.ts, room-news.ts or saved-players.ts", () => {
    const examples = ['rooms', 'moving-rooms', 'room-news', 'saved-players'].map((f) =>
      read(`examples/objects/${f}.ts`),
    );
    const blocks = [
      ...tsBlocks(read('docs/objects.md')),
      ...tsBlocks(sectionOf(read('README.md'), 'Spots and Actors')),
    ];
    expect(tsBlocks(sectionOf(read('README.md'), 'Spots and Actors')).length).toBeGreaterThan(0);
    expect(blocks.length).toBeGreaterThan(5);
    expect(blocks.filter((block) => !examples.some((example) => isRunOf(block, example)))).toEqual([]);
  });

  it('every TypeScript snippet about CURVE (configuration.md security, operations.md encryption) is a run of lines of examples/security/curve-mesh.ts', () => {
    const example = read('examples/security/curve-mesh.ts');
    const blocks = [
      ...tsBlocks(sectionOf(read('docs/configuration.md'), 'security')),
      ...tsBlocks(sectionOf(read('docs/operations.md'), 'Encryption and authentication (CURVE)')),
    ];
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    expect(blocks.filter((block) => !isRunOf(block, example))).toEqual([]);
  });

  it('every TypeScript snippet of docs/sessions.md is a run of lines of one of examples/sessions/*.ts', () => {
    const examples = [
      'game-gateway',
      'browser-player',
      'tls-gateway',
      'browser-socket',
      'behind-a-proxy',
      'browser-resume',
    ].map((f) => read(`examples/sessions/${f}.ts`));
    const blocks = tsBlocks(read('docs/sessions.md'));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(blocks.filter((block) => !examples.some((example) => isRunOf(block, example)))).toEqual([]);
    // The browser client's section shows the browser example.
    expect(
      tsBlocks(sectionOf(read('docs/sessions.md'), 'Clients')).some((b) => isRunOf(b, examples[1] as string)),
    ).toBe(true);
  });
});
