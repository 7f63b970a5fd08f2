/**
 * Runs a Node script as a child process to its end, as a user's shell would: what it printed, its exit
 * code and how long it took. Killed, and the promise rejected with what it printed, after `limitMs`.
 */
import { spawn } from 'node:child_process';

export interface NodeRun {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
  readonly ms: number;
}

/** `node script ...args` with `env` over this process's environment (and no jest NODE_OPTIONS). */
export function runNode(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  limitMs: number,
): Promise<NodeRun> {
  const started = Date.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [script, ...args], {
      env: { ...process.env, NODE_OPTIONS: '', ...env },
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${script} did not end within ${limitMs / 1000} s; it printed:\n${out}\n${err}`));
    }, limitMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      fail(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, out, err, ms: Date.now() - started });
    });
  });
}
