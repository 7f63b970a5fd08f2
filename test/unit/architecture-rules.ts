import { readFileSync, readdirSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import ts from 'typescript';

/**
 * The layering rules of docs/architecture.md#layer-rules, as a pure function over (path, text) pairs so the rules
 * themselves can be tested on synthetic input.
 *
 *   lib/nest        @nestjs/*, rxjs
 *   lib/runtime     @opentelemetry/* (an optional peer, loaded with a dynamic import)
 *   lib/spot | lib/transport (zeromq) | lib/store (ioredis; pg, an optional peer loaded with a dynamic
 *     import) | lib/session-client — peers; never import each other
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
  // An optional peer, loaded by the PostgreSQL State Store when it starts (lib/store/postgres/pg-driver.ts).
  { test: (p) => p === 'pg', name: 'pg', layer: 'store' },
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

/**
 * How a file outside lib/core may reach core, as a rule text, or undefined when `target` is allowed.
 * The package's public barrel (lib/index.ts) re-exports core through lib/core/index.ts alone. Every
 * other file imports the door that holds the name, a room's index (`lib/core/wire/index.ts`) or a
 * root file (`lib/core/errors.ts`), so an import line says what the file depends on; never core's
 * barrel and never a file inside a room.
 */
function coreDoorRule(layer: string, target: string): string | undefined {
  const shown = target.replace(/\.ts$/, '.js');
  if (layer === '(barrel)') {
    return target === 'lib/core/index.ts'
      ? undefined
      : `imports across layers go through lib/core/index.js, not ${shown}`;
  }
  if (target === 'lib/core/index.ts')
    return `lib/core/index.js is the package's re-export point: import the core room (lib/core/<room>/index.js) or root file that holds the name`;
  const parts = target.split('/');
  if (parts.length === 3 || (parts.length === 4 && parts[3] === 'index.ts')) return undefined;
  return `imports of lib/core go through a room's index (lib/core/<room>/index.js) or a root file, not ${shown}`;
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
      if (targetLayer === 'core') {
        const rule = coreDoorRule(layer, target);
        if (rule !== undefined) out.push({ file: path, specifier, rule });
      } else if (target !== `lib/${targetLayer}/index.ts`) {
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

/**
 * A layer's floor plan: its ranks, lowest first. A rank names one room (a subfolder), several rooms
 * that stand side by side (they may not import each other), a root file (`kinds.ts`), or `(root)`
 * for every root file not named. A file may import only its own room and ranks below it; the
 * layer's `index.ts` is the door to the outside and stands above all. With `doors`, a room reaches
 * another room only through that room's `index.ts`.
 */
export interface FloorPlan {
  readonly layer: string;
  readonly ranks: readonly (string | readonly string[])[];
  readonly doors: boolean;
}

/** The rooms of lib/core, lowest first: a room imports only rooms before it and core's root files. */
export const CORE_ROOMS = [
  'session-wire',
  'wire',
  'observe',
  'calls',
  'ports',
  'options',
  'objects',
] as const;

/** Every layer whose rooms have a checked order (see `checkRooms`). */
export const FLOOR_PLANS: readonly FloorPlan[] = [
  { layer: 'core', ranks: ['(root)', ...CORE_ROOMS], doors: false },
  {
    layer: 'transport',
    ranks: [
      '(root)',
      ['address', 'io'],
      ['inbound', 'liveness', 'outbound', 'security', 'session'],
      ['client-server', 'fanout', 'net', 'route-mesh', 'websocket'],
    ],
    doors: true,
  },
  {
    layer: 'spot',
    ranks: [
      'timing',
      'wire',
      'execution',
      'resolve',
      'durable',
      'owner',
      'multicast',
      'relocation',
      'caller',
      ['membership', 'session'],
      '(root)',
    ],
    doors: true,
  },
];

/** `lib/<layer>/<room>/...` → room; a root file → its name; the layer's index → undefined. */
function placeIn(plan: FloorPlan, path: string): { name: string; rank: number } | undefined {
  const parts = path.split('/');
  if (parts[0] !== 'lib' || parts[1] !== plan.layer || parts.length < 3) return undefined;
  if (parts.length === 3 && parts[2] === 'index.ts') return undefined;
  const name = parts.length === 3 ? (parts[2] as string) : `${parts[2]}/`;
  const rankOf = (n: string) =>
    plan.ranks.findIndex((r) => (typeof r === 'string' ? r === n : r.includes(n)));
  const room = name.endsWith('/') ? name.slice(0, -1) : name;
  let rank = rankOf(room);
  if (rank < 0 && parts.length === 3) rank = rankOf('(root)');
  return { name: parts.length === 3 ? room : `${plan.layer}/${room}`, rank };
}

function rankLabel(r: string | readonly string[]): string {
  return typeof r === 'string' ? r : `{${r.join(', ')}}`;
}

/** A floor plan as one line, lowest first: `(root) < wire < ... < {a, b}` (CONTRIBUTING.md's Layout quotes it). */
export function floorPlanOrder(plan: FloorPlan): string {
  return plan.ranks.map(rankLabel).join(' < ');
}

/**
 * Imports inside each planned layer against its floor plan: a file importing a room or root file of
 * a higher rank (or a side-by-side room of its own rank), a file in a room or root file with no rank,
 * and (with `doors`) a room reached other than through its `index.ts` — one violation each.
 */
export function checkRooms(files: readonly SourceFile[], plans = FLOOR_PLANS): Violation[] {
  const out: Violation[] = [];
  for (const plan of plans) {
    const order = floorPlanOrder(plan);
    for (const { path, text } of files) {
      const from = placeIn(plan, path);
      if (from === undefined) continue;
      if (from.rank < 0) {
        out.push({
          file: path,
          rule: `${from.name} has no place in lib/${plan.layer}'s floor plan (${order})`,
        });
        continue;
      }
      for (const specifier of importsOf(text)) {
        if (!specifier.startsWith('.')) continue;
        const target = resolveRelative(path, specifier);
        const to = placeIn(plan, target);
        if (to === undefined || to.rank < 0 || to.name === from.name) continue;
        const isRoom = to.name.includes('/');
        if (to.rank > from.rank || (to.rank === from.rank && isRoom)) {
          out.push({
            file: path,
            specifier,
            rule: `${from.name} imports ${to.name}, ${to.rank > from.rank ? 'a room after it' : 'a room beside it'} (order: ${order})`,
          });
        } else if (plan.doors && isRoom && !target.endsWith(`/${to.name.split('/')[1]}/index.ts`)) {
          out.push({
            file: path,
            specifier,
            rule: `rooms of lib/${plan.layer} meet through their index: import ../${to.name.split('/')[1]}/index.js, not ${specifier}`,
          });
        }
      }
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

/** All `.ts` files under `<root>/<folder>` (`lib` unless told), as repository-relative paths. */
export function readLibFiles(root: string, folder = 'lib'): SourceFile[] {
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
  walk(join(root, folder));
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

export function formatViolations(violations: readonly Violation[]): string {
  return violations
    .map((v) =>
      v.specifier === undefined ? `${v.file}: ${v.rule}` : `${v.file}: import '${v.specifier}': ${v.rule}`,
    )
    .join('\n');
}
