import { readFileSync, readdirSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import ts from 'typescript';

/**
 * The layering rules of DESIGN §2, as a pure function over (path, text) pairs so the rules
 * themselves can be tested on synthetic input.
 *
 *   lib/nest        @nestjs/*, rxjs
 *   lib/runtime     @opentelemetry/* (an optional peer, loaded with a dynamic import)
 *   lib/spot | lib/transport (zeromq) | lib/store (ioredis) | lib/session-client — peers; never import each other
 *   lib/core        (msgpackr allowed; no zeromq, ioredis, rxjs, @nestjs)
 *
 * lib/index.ts (the public barrel) sits above everything.
 */

export interface SourceFile {
  /** Path relative to the repository root, with forward slashes: `lib/core/wire.ts`. */
  readonly path: string;
  readonly text: string;
}

export interface Violation {
  readonly file: string;
  /** The import specifier as written, or undefined for file-level rules. */
  readonly specifier?: string;
  readonly rule: string;
}

export const MAX_LINES = 400;

const RANK: Record<string, number> = {
  core: 0,
  store: 1,
  transport: 1,
  spot: 1,
  // The Node client of the session wire: core's wire only, never zeromq (a game client has no ZMQ).
  'session-client': 1,
  runtime: 2,
  nest: 3,
  '(barrel)': 4,
};

/** Which layer owns each third-party package that is restricted to one layer. */
const OWNED_PACKAGES: readonly {
  readonly test: (pkg: string) => boolean;
  readonly name: string;
  readonly layer: string;
}[] = [
  { test: (p) => p === 'zeromq', name: 'zeromq', layer: 'transport' },
  { test: (p) => p === 'ioredis', name: 'ioredis', layer: 'store' },
  { test: (p) => p.startsWith('@nestjs/'), name: '@nestjs/*', layer: 'nest' },
  { test: (p) => p === 'rxjs', name: 'rxjs', layer: 'nest' },
  // An optional peer, loaded lazily by the runtime (trace propagation); the transport sees core's interface.
  { test: (p) => p.startsWith('@opentelemetry/'), name: '@opentelemetry/*', layer: 'runtime' },
];

/** `lib/<layer>/...` → layer; `lib/index.ts` → the barrel; anything else under lib → undefined. */
export function layerOf(path: string): string | undefined {
  const parts = path.split('/');
  if (parts[0] !== 'lib') return undefined;
  if (parts.length === 2) return parts[1] === 'index.ts' ? '(barrel)' : undefined;
  return parts[1] !== undefined && parts[1] in RANK ? parts[1] : undefined;
}

/** Every module specifier of a file: static imports, `export ... from`, `import()` and `require()`. */
export function importsOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/** Resolves a relative specifier to a repository path, mapping the `.js` suffix back to `.ts`. */
function resolveRelative(from: string, specifier: string): string {
  return posix.normalize(posix.join(posix.dirname(from), specifier)).replace(/\.js$/, '.ts');
}

function lineCount(text: string): number {
  if (text.length === 0) return 0;
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

export function checkArchitecture(files: readonly SourceFile[]): Violation[] {
  const out: Violation[] = [];
  for (const { path, text } of files) {
    const layer = layerOf(path);
    if (layer === undefined) {
      out.push({
        file: path,
        rule: `not inside a known layer folder (${Object.keys(RANK)
          .filter((l) => l !== '(barrel)')
          .join(', ')})`,
      });
      continue;
    }
    const lines = lineCount(text);
    if (lines > MAX_LINES)
      out.push({ file: path, rule: `${lines} lines; a lib file may have at most ${MAX_LINES}` });

    for (const specifier of importsOf(text)) {
      if (specifier.startsWith('node:')) continue;
      if (!specifier.startsWith('.')) {
        const pkg = packageName(specifier);
        const owned = OWNED_PACKAGES.find((o) => o.test(pkg));
        if (owned && owned.layer !== layer) {
          out.push({
            file: path,
            specifier,
            rule:
              layer === 'core'
                ? `lib/core must not import ${owned.name}`
                : `${owned.name} may only be imported in lib/${owned.layer}`,
          });
        }
        continue;
      }
      const target = resolveRelative(path, specifier);
      const targetLayer = layerOf(target);
      if (targetLayer === undefined) {
        out.push({ file: path, specifier, rule: `import resolves outside the lib layers (${target})` });
        continue;
      }
      if (targetLayer === layer) continue;
      const from = RANK[layer] as number;
      const to = RANK[targetLayer] as number;
      if (to > from) {
        out.push({
          file: path,
          specifier,
          rule: `lib/${layer} imports lib/${targetLayer}, a layer above it`,
        });
      } else if (to === from) {
        out.push({
          file: path,
          specifier,
          rule: `lib/${layer} and lib/${targetLayer} are peers and must not import each other`,
        });
      }
      if (target !== `lib/${targetLayer}/index.ts`) {
        out.push({
          file: path,
          specifier,
          rule: `imports across layers go through lib/${targetLayer}/index.js, not ${target.replace(/\.ts$/, '.js')}`,
        });
      }
    }
  }
  return out;
}

/**
 * Every import cycle among `files` (relative imports, `import type` included: a cycle of types is
 * still two modules that cannot be read apart). Each cycle is one strongly connected group of
 * files, its paths sorted, joined with " <-> ".
 */
export function importCycles(files: readonly SourceFile[]): string[] {
  const paths = new Set(files.map((f) => f.path));
  const edges = new Map<string, string[]>();
  for (const { path, text } of files) {
    const targets = importsOf(text)
      .filter((s) => s.startsWith('.'))
      .map((s) => resolveRelative(path, s))
      .filter((t) => paths.has(t));
    edges.set(path, targets);
  }
  return stronglyConnected(edges);
}

/**
 * Every cycle among the folders of `files`: folder A depends on folder B when a file directly in A
 * imports one directly in B. A folder's `index.ts` re-exporting its own subfolders is how the folder
 * shows its rooms, not a dependency on them, so those edges do not count. Groups as `importCycles`.
 */
export function folderCycles(files: readonly SourceFile[]): string[] {
  const edges = new Map<string, string[]>();
  for (const { path, text } of files) {
    const from = posix.dirname(path);
    const targets = edges.get(from) ?? [];
    edges.set(from, targets);
    for (const specifier of importsOf(text)) {
      if (!specifier.startsWith('.')) continue;
      const to = posix.dirname(resolveRelative(path, specifier));
      const barrelOfChild = posix.basename(path) === 'index.ts' && to.startsWith(`${from}/`);
      if (to !== from && !barrelOfChild && !targets.includes(to)) targets.push(to);
    }
  }
  return stronglyConnected(edges);
}

/** The rooms of lib/core, lowest first: a room imports only rooms before it and core's root files. */
export const CORE_ROOMS = ['wire', 'observe', 'calls', 'ports', 'options', 'objects'] as const;

/**
 * Imports inside lib/core against the room order: a room file importing a later room, or a root file
 * (other than the barrel) importing any room, is one violation each.
 */
export function checkCoreRooms(files: readonly SourceFile[]): Violation[] {
  const roomOf = (path: string): number | 'root' | undefined => {
    const parts = path.split('/');
    if (parts[0] !== 'lib' || parts[1] !== 'core') return undefined;
    if (parts.length === 3) return 'root';
    const i = (CORE_ROOMS as readonly string[]).indexOf(parts[2] as string);
    return i < 0 ? undefined : i;
  };
  const out: Violation[] = [];
  for (const { path, text } of files) {
    const from = roomOf(path);
    if (from === undefined) continue;
    if (path === 'lib/core/index.ts') continue;
    for (const specifier of importsOf(text)) {
      if (!specifier.startsWith('.')) continue;
      const to = roomOf(resolveRelative(path, specifier));
      if (to === undefined || to === 'root' || to === from) continue;
      if (from === 'root' || to > from)
        out.push({
          file: path,
          specifier,
          rule:
            from === 'root'
              ? `a root file of lib/core imports no room (core/${CORE_ROOMS[to]})`
              : `core/${CORE_ROOMS[from]} imports core/${CORE_ROOMS[to]}, a room after it (order: ${CORE_ROOMS.join(' < ')})`,
        });
    }
  }
  return out;
}

/** Tarjan's strongly connected components of `edges`: each group of two or more (or a self-loop), sorted. */
function stronglyConnected(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    const selfImport = (edges.get(v) ?? []).includes(v);
    if (group.length > 1 || selfImport) cycles.push(group.sort().join(' <-> '));
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles.sort();
}

/** All `.ts` files under `<root>/lib`, as repository-relative paths. */
export function readLibFiles(root: string): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && entry.name.endsWith('.ts')) {
        files.push({ path: relative(root, full).split('\\').join('/'), text: readFileSync(full, 'utf8') });
      }
    }
  };
  walk(join(root, 'lib'));
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

export function formatViolations(violations: readonly Violation[]): string {
  return violations
    .map((v) =>
      v.specifier === undefined ? `${v.file}: ${v.rule}` : `${v.file}: import '${v.specifier}': ${v.rule}`,
    )
    .join('\n');
}
