/** Reading the docs' Markdown for the docs specs: code blocks, sections, and runs of example lines. */
import { readFileSync, readdirSync } from 'node:fs';

export const read = (file: string): string => readFileSync(file, 'utf8');

/** The pages a reader of the repository reads: README.md, CONTRIBUTING.md and every docs/*.md. */
export const PAGES: readonly string[] = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text outside fenced code blocks (a `#` comment in a shell block is no heading, `](` in code no link). */
export function withoutCode(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** The fenced TypeScript blocks of `markdown`, each without its closing newline. */
export function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```(?:ts|typescript)\n([\s\S]*?)^```/gm)].map((m) =>
    m[1].replace(/\n$/, ''),
  );
}

/** The part of `markdown` under the `## heading`, up to the next `## `. */
export function sectionOf(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) return '';
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** `lines` without the indentation they all share (blank lines aside). */
function dedent(lines: string[]): string {
  const indents = lines.filter((l) => l.trim() !== '').map((l) => l.length - l.trimStart().length);
  const cut = Math.min(...indents);
  return lines.map((l) => l.slice(cut)).join('\n');
}

/**
 * Where `block` is a run of whole lines of `file`, word for word up to the indentation the run
 * shares: the run's first and last character offsets, or `undefined` when it is none.
 */
export function runIn(block: string, file: string): { start: number; end: number } | undefined {
  const want = dedent(block.split('\n'));
  const lines = file.split('\n');
  const n = block.split('\n').length;
  let offset = 0;
  for (let i = 0; i + n <= lines.length; i++) {
    const run = lines.slice(i, i + n);
    if (dedent(run) === want) return { start: offset, end: offset + run.join('\n').length };
    offset += (lines[i] as string).length + 1;
  }
  return undefined;
}

export function isRunOf(block: string, file: string): boolean {
  return runIn(block, file) !== undefined;
}

/**
 * A heading's anchor as GitHub makes it: the rendered text (code spans, emphasis, escapes and links
 * reduced to their text), lower-cased, every character but letters, digits, `_`, `-` and spaces
 * dropped, spaces turned into `-`.
 */
export function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\\(.)/g, '$1')
    .replace(/[`*]/g, '')
    .replace(/(^|\s)_+|_+(\s|$)/g, '$1$2');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown page has: its headings' slugs (a repeated one gets `-1`, `-2`, ...) and its `<a id>`s. */
export function anchorsOf(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of withoutCode(markdown).matchAll(/^#{1,6}\s+(.*?)\s*#*\s*$/gm)) {
    const base = slug(heading as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id] of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(id as string);
  return out;
}
