/**
 * `--baseline REV`: REV's `lib` and `bench`, compiled on their own so that REV's bench/systems
 * scripts can run next to the current ones. The files come from `git archive` rather than a
 * `git worktree`: a worktree would be registered in the repository's shared `.git` (visible to every
 * other worktree until pruned), while an unpacked archive is a plain directory that one `rm` removes.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * What a baseline build needs from its revision: the sources and the config that compiles them —
 * `sample/` too, whose private redis-server the objects and relocation parts import, and `scripts/`,
 * whose system-deps.mjs that module imports (from ec7557a on; older revisions have no `scripts/`,
 * so only the paths a revision has are unpacked).
 */
const PATHS = ['lib', 'bench', 'sample', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.bench.json'];

/** tsc prints its diagnostics to stdout; a build log can be long. */
const MAX_BUFFER = 16 * 2 ** 20;

export interface BaselineBuild {
  /** The revision as given on the command line. */
  readonly rev: string;
  readonly commit: string;
  readonly short: string;
  /** The baseline's compiled bench/systems scripts. */
  readonly scriptDir: string;
  /** Deletes the build directory. Idempotent and synchronous, so it also runs from an 'exit' handler. */
  remove(): void;
}

/** The build's command still running, so that `remove()` can end it before deleting its directory. */
let running: ChildProcess | undefined;

/**
 * Runs a command to its end; resolves with its trimmed stdout, rejects with an error that starts
 * with `step` and carries the command's output (tsc writes its diagnostics to stdout).
 */
function run(step: string, file: string, args: string[], cwd?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    running = execFile(
      file,
      args,
      { cwd, encoding: 'utf8', maxBuffer: MAX_BUFFER },
      (error, stdout, stderr) => {
        running = undefined;
        if (!error) return resolve(stdout.trim());
        const output = [stdout, stderr].filter((s) => s.trim().length > 0).join('\n');
        reject(new Error(`${step}: ${output.trim() || error.message}`, { cause: error }));
      },
    );
  });
}

/**
 * Unpacks `rev`'s lib, bench and tsconfigs into a fresh directory under `<root>/.bench-build/`,
 * links the repository's own node_modules into it (never installs) and compiles it with that
 * revision's tsconfig.bench.json and the repository's TypeScript. Resolves once the scripts are
 * built; rejects with a message naming the step that failed (an unknown revision, a revision without
 * these files, a compile error), after deleting the directory. The directory is also deleted when
 * the process exits, whatever the way; call `remove()` to delete it sooner.
 */
export async function buildBaseline(
  rev: string,
  root: string,
  log: (line: string) => void,
): Promise<BaselineBuild> {
  const git = (step: string, args: string[]) =>
    run(`--baseline ${rev}: ${step}`, 'git', ['-C', root, ...args]);
  const verify = ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`];
  const commit = await git('not a commit in this repository', verify);
  const short = await git('git rev-parse --short', ['rev-parse', '--short', commit]);
  const parent = join(root, '.bench-build');
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, `baseline-${short}-`));
  const remove = (): void => {
    process.off('exit', remove);
    // A runner killed mid-build must not leave a tsc behind that writes into the directory again.
    running?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', remove);
  const started = Date.now();
  log(`baseline ${rev} = ${short}: building in ${relative(root, dir)}/`);
  try {
    const tar = join(dir, 'baseline.tar');
    const present = (await git('git ls-tree', ['ls-tree', '--name-only', commit, '--', ...PATHS])).split(
      '\n',
    );
    await git('git archive', [
      'archive',
      '--format=tar',
      '-o',
      tar,
      commit,
      '--',
      ...present.filter(Boolean),
    ]);
    await run(`--baseline ${rev}: tar`, 'tar', ['-xf', tar, '-C', dir]);
    rmSync(tar);
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const config = join(dir, 'tsconfig.bench.json');
    await run(`--baseline ${rev}: tsc -p tsconfig.bench.json`, process.execPath, [tsc, '-p', config], dir);
    const scriptDir = join(dir, '.bench-build', 'bench', 'systems');
    if (!existsSync(scriptDir))
      throw new Error(`--baseline ${rev}: its tsconfig.bench.json built no .bench-build/bench/systems`);
    log(`baseline ${short} built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { rev, commit, short, scriptDir, remove };
  } catch (error) {
    remove();
    throw error;
  }
}
