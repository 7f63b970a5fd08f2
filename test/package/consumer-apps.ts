/**
 * Builds apps the way a user would: from the packed tarball, installed with npm into a folder outside
 * the repo, compiled with tsc and run with node. The dependencies an app installs are pinned to the
 * versions this repo was tested with, so npm finds them in its cache (`npm ci` put them there).
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { runCommand } from '../helpers/run-node.js';

export const REPO = process.cwd();
const require = createRequire(import.meta.url);
export const TSC = require.resolve('typescript/bin/tsc');

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a command to its end, or kills it after `timeoutMs`. npm's own `npm_*` variables and jest's
 * NODE_OPTIONS are not passed on: the child must behave as it would in a user's shell.
 */
export async function run(
  command: string,
  args: readonly string[],
  cwd: string,
  timeoutMs: number,
): Promise<Run> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.toLowerCase().startsWith('npm_') && key !== 'NODE_OPTIONS') env[key] = value;
  }
  const { code, out, err } = await runCommand(command, args, { cwd, env, limitMs: timeoutMs });
  return { code, stdout: out, stderr: err };
}

/** Like `run`, but a non-zero exit is an error that shows what the command printed. */
export async function runOk(
  command: string,
  args: readonly string[],
  cwd: string,
  timeoutMs: number,
): Promise<Run> {
  const result = await run(command, args, cwd, timeoutMs);
  if (result.code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} in ${cwd} exited ${result.code}:\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result;
}

export interface PackedFile {
  readonly path: string;
}

/** `npm pack` of the freshly built package into `dir`: the tarball's path and the files it holds. */
export async function pack(dir: string): Promise<{ tarball: string; files: readonly string[] }> {
  await runOk('npm', ['run', 'build'], REPO, 120000);
  // The build ran just above; --ignore-scripts keeps its output out of the JSON.
  const { stdout } = await runOk(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', dir],
    REPO,
    60000,
  );
  const [info] = JSON.parse(stdout) as { filename: string; files: PackedFile[] }[];
  return { tarball: join(dir, info.filename), files: info.files.map((f) => f.path) };
}

function installedVersion(name: string): string {
  return (
    JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
  ).version;
}

/** What a Nest app that uses every entry point of nestjs-zlink depends on (peers included). */
function dependencies(tarball: string): Record<string, string> {
  const deps: Record<string, string> = { 'nestjs-zlink': `file:${tarball}` };
  for (const name of [
    '@nestjs/common',
    '@nestjs/core',
    '@nestjs/microservices',
    '@nestjs/terminus',
    'reflect-metadata',
    'rxjs',
    '@types/node',
  ]) {
    deps[name] = installedVersion(name);
  }
  return deps;
}

export type ModuleSystem = 'commonjs' | 'module';

/**
 * Creates an app in `dir` (package.json with `type`, the given tsconfigs, `src/` from `sources`) and
 * installs its dependencies with npm.
 */
export async function createApp(
  dir: string,
  type: ModuleSystem,
  tarball: string,
  tsconfigs: Record<string, object>,
  sources: readonly string[],
): Promise<void> {
  mkdirSync(join(dir, 'src'), { recursive: true });
  const pkg = {
    name: `zlink-consumer-${type}`,
    version: '0.0.0',
    private: true,
    type,
    dependencies: dependencies(tarball),
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  for (const [file, config] of Object.entries(tsconfigs)) {
    writeFileSync(join(dir, file), `${JSON.stringify(config, null, 2)}\n`);
  }
  for (const source of sources)
    copyFileSync(resolve(REPO, source), join(dir, 'src', source.split('/').pop()!));
  await runOk(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
    dir,
    300000,
  );
}

/** The options every consumer tsconfig shares: what Nest's own app templates set. */
const NEST_APP = {
  target: 'ES2023',
  emitDecoratorMetadata: true,
  experimentalDecorators: true,
  strict: true,
  skipLibCheck: true,
  types: ['node'],
  rootDir: './src',
  outDir: './dist',
};

/** A CommonJS app as `nest new --type cjs` makes it: `module: commonjs` (so moduleResolution node10). */
export const CJS_TSCONFIG = { compilerOptions: { ...NEST_APP, module: 'commonjs' }, include: ['src'] };

/** An ESM app: `module`/`moduleResolution` nodenext in a `type: module` package. */
export const ESM_TSCONFIG = {
  compilerOptions: { ...NEST_APP, module: 'nodenext', moduleResolution: 'nodenext' },
  include: ['src'],
};

/** Type-check only, under another module resolution. */
export function checkOnly(compilerOptions: object): object {
  return { compilerOptions: { ...NEST_APP, ...compilerOptions, noEmit: true }, include: ['src'] };
}
