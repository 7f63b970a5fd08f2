/**
 * Runs a command as a child process to its end, as a user's shell would: what it printed, its exit code
 * and how long it took. Killed, and the promise rejected with what it printed, after `limitMs`.
 */
import { spawn } from 'node:child_process';

export interface CommandRun {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
  readonly ms: number;
}

/**
 * `command ...args` in `cwd` (default: this process's) with exactly `env`. Resolves once the child has
 * exited and its output is read to the end ('close'); rejects when it cannot start or outlives `limitMs`.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { readonly env: NodeJS.ProcessEnv; readonly cwd?: string; readonly limitMs: number },
): Promise<CommandRun> {
  const started = Date.now();
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(
        new Error(
          `${[command, ...args].join(' ')} did not end within ${options.limitMs / 1000} s; it printed:\n${out}\n${err}`,
        ),
      );
    }, options.limitMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      fail(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, out, err, ms: Date.now() - started });
    });
  });
}

/** `node script ...args` with `env` over this process's environment (and no jest NODE_OPTIONS). */
export function runNode(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  limitMs: number,
): Promise<CommandRun> {
  return runCommand(process.execPath, [script, ...args], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    limitMs,
  });
}
