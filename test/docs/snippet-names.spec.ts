/**
 * A snippet never uses a name the page does not show: every name a TypeScript snippet of the session
 * docs, the CURVE docs, the arrangements, the Nest microservices page, the observability section or the
 * README uses is declared in a snippet of the same page, imported from a package, or a global (see
 * snippet-names.ts). The snippets are runs of example files, so the compiler says where each name is
 * declared; and those files compile, so no snippet shows code that does not.
 */
import { describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import { resolve } from 'node:path';
import { read, sectionOf, tsBlocks } from './markdown.js';
import { examplesProgram, unshownNames } from './snippet-names.js';

const OBJECTS = ['rooms', 'moving-rooms', 'room-news', 'saved-players'].map(
  (f) => `examples/objects/${f}.ts`,
);
const SESSIONS = [
  'examples/sessions/game-gateway.ts',
  'examples/sessions/tls-gateway.ts',
  'examples/sessions/behind-a-proxy.ts',
  'examples/sessions/browser-socket.ts',
  'examples/sessions/browser-player.ts',
  'examples/sessions/browser-resume.ts',
];
const CURVE = ['examples/security/curve-mesh.ts'];
const QUICKSTART = ['examples/quickstart/main.ts'];
const ARRANGEMENTS = ['examples/arrangements/arrangements.ts'];
const MICROSERVICES = ['examples/microservices/orders.ts'];
const OBSERVABILITY = ['examples/observability/ops-endpoints.ts'];
const EXAMPLES = [
  ...SESSIONS,
  ...OBJECTS,
  ...CURVE,
  ...QUICKSTART,
  ...ARRANGEMENTS,
  ...MICROSERVICES,
  ...OBSERVABILITY,
];

/** Each page: its TypeScript snippets and the example files they are runs of. */
const PAGES: { page: string; files: string[]; blocks: () => string[] }[] = [
  { page: 'docs/sessions.md', files: SESSIONS, blocks: () => tsBlocks(read('docs/sessions.md')) },
  {
    page: 'README.md, Spots and Actors',
    files: OBJECTS,
    blocks: () => tsBlocks(sectionOf(read('README.md'), 'Spots and Actors')),
  },
  {
    page: 'README.md, the complete example',
    files: QUICKSTART,
    blocks: () => tsBlocks(read('README.md')).filter((b) => b.trim() === read(QUICKSTART[0]).trim()),
  },
  {
    page: 'docs/configuration.md (security)',
    files: CURVE,
    blocks: () => tsBlocks(sectionOf(read('docs/configuration.md'), 'security')),
  },
  {
    page: 'docs/operations.md (CURVE)',
    files: CURVE,
    blocks: () => tsBlocks(sectionOf(read('docs/operations.md'), 'Encryption and authentication (CURVE)')),
  },
  { page: 'docs/arrangements.md', files: ARRANGEMENTS, blocks: () => tsBlocks(read('docs/arrangements.md')) },
  {
    page: 'docs/coming-from-nest.md',
    files: MICROSERVICES,
    blocks: () => tsBlocks(read('docs/coming-from-nest.md')),
  },
  {
    page: 'docs/operations.md (observability)',
    files: OBSERVABILITY,
    blocks: () => tsBlocks(sectionOf(read('docs/operations.md'), 'Observability, health and tracing')),
  },
];

describe('doc snippets show every name they use', () => {
  const program = examplesProgram(EXAMPLES);

  it.each(EXAMPLES)('%s compiles', (file) => {
    const source = program.getSourceFile(resolve(file));
    expect(source).toBeDefined();
    const diagnostics = source ? ts.getPreEmitDiagnostics(program, source) : [];
    expect(diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  });

  it.each(PAGES.map((p) => [p.page, p] as const))('%s', (_page, { files, blocks }) => {
    const all = blocks();
    expect(all.length).toBeGreaterThan(0);
    expect(unshownNames(program, files, all)).toEqual([]);
  });
});
