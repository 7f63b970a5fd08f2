import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { posix } from 'node:path';
import ts from 'typescript';

/**
 * The browser entry (`nestjs-zlink/session-client/browser`, lib/session-client/browser.ts) runs in a
 * page: nothing it imports, directly or through core, may import a Node built-in or use Node's
 * globals (Buffer, process, ...), and its only package is msgpackr (whose browser build needs no
 * Buffer). Walked with the TypeScript API from the entry, every relative import followed, as
 * test/unit/architecture-rules.ts reads imports. test/e2e/browser-client.spec.ts loads it in Chromium.
 */

const ENTRY = 'lib/session-client/browser.ts';
const PACKAGES = new Set(['msgpackr']);
/** Node's globals a browser lacks (and `NodeJS`, the namespace of its types). */
const NODE_GLOBALS = new Set([
  'Buffer',
  'process',
  'require',
  'global',
  '__dirname',
  '__filename',
  'setImmediate',
  'clearImmediate',
  'NodeJS',
]);

/** Every file the entry reaches through relative imports (`import type` too), the entry first. */
function moduleGraph(entry: string): string[] {
  const seen = [entry];
  for (let i = 0; i < seen.length; i++) {
    const file = seen[i] as string;
    for (const specifier of specifiers(readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = posix.normalize(posix.join(posix.dirname(file), specifier)).replace(/\.js$/, '.ts');
      if (!seen.includes(target)) seen.push(target);
    }
  }
  return seen;
}

function specifiers(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** A name in a property's place (`x.process`, `{ global: 1 }`) is not the global. */
function isPropertyName(node: ts.Identifier): boolean {
  const parent = node.parent;
  return (
    (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
    ((ts.isPropertyAssignment(parent) ||
      ts.isPropertySignature(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isMethodDeclaration(parent) ||
      ts.isMethodSignature(parent)) &&
      parent.name === node)
  );
}

/** What in one file a browser cannot run: Node imports, other packages, Node's globals (with their line). */
function nodeUses(path: string, text: string): string[] {
  const out: string[] = [];
  for (const specifier of specifiers(text)) {
    const bare = specifier.replace(/^node:/, '').split('/')[0] as string;
    if (specifier.startsWith('node:') || builtinModules.includes(bare))
      out.push(`${path}: imports the Node built-in ${specifier}`);
    else if (!specifier.startsWith('.') && !PACKAGES.has(bare))
      out.push(`${path}: imports the package ${specifier}`);
  }
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && NODE_GLOBALS.has(node.text) && !isPropertyName(node)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      out.push(`${path}:${line}: uses ${node.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe('the browser entry of the session client', () => {
  const files = moduleGraph(ENTRY);

  it('reaches the protocol, the WebSocket transport and core through its imports (the walk is not empty)', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        ENTRY,
        'lib/session-client/session-machine.ts',
        'lib/session-client/websocket-transport.ts',
        'lib/session-client/emitter.ts',
        'lib/core/errors.ts',
        'lib/core/session-wire/index.ts',
        'lib/core/session-wire/framing.ts',
      ]),
    );
    expect(files).not.toContain('lib/session-client/node-transports.ts');
  });

  it('imports no Node built-in and no package but msgpackr, and uses no Node global, anywhere in its graph', () => {
    expect(files.flatMap((file) => nodeUses(file, readFileSync(file, 'utf8')))).toEqual([]);
  });

  it('would see them: the Node entry imports node:events, node:net, ws and uses Buffer', () => {
    const found = moduleGraph('lib/session-client/index.ts').flatMap((file) =>
      nodeUses(file, readFileSync(file, 'utf8')),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'lib/session-client/session-client.ts: imports the Node built-in node:events',
        'lib/session-client/node-transports.ts: imports the Node built-in node:net',
        'lib/session-client/node-transports.ts: imports the package ws',
        expect.stringMatching(/^lib\/session-client\/node-transports\.ts:\d+: uses Buffer$/),
      ]),
    );
    expect(nodeUses('x.ts', 'const a = { process: 1 }; a.process; const b = global;')).toEqual([
      'x.ts:1: uses global',
    ]);
  });

  it('is a package entry point: exports, typesVersions, the compiler paths and jest all name it', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
      typesVersions: { '*': Record<string, string[]> };
    };
    expect(pkg.exports['./session-client/browser']).toEqual({
      types: './dist/session-client/browser.d.ts',
      default: './dist/session-client/browser.js',
    });
    expect(pkg.typesVersions['*']['session-client/browser']).toEqual(['./dist/session-client/browser.d.ts']);
    const tsconfig = ts.readConfigFile('tsconfig.json', ts.sys.readFile).config as {
      compilerOptions: { paths: Record<string, string[]> };
    };
    expect(tsconfig.compilerOptions.paths['nestjs-zlink/session-client/browser']).toEqual([
      './lib/session-client/browser.ts',
    ]);
    expect(readFileSync('jest.config.mjs', 'utf8')).toContain(
      "'^nestjs-zlink/session-client/browser$': '<rootDir>/lib/session-client/browser.ts'",
    );
  });
});
