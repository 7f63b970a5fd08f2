/**
 * The demo's Location Store: a private `redis-server` on a free loopback port, keeping nothing on
 * disk unless asked for an append-only file (in a temporary folder, removed when it stops).
 * `requirePrivateRedis` fails naming what is wrong; `startPrivateRedis` is `undefined` only when the
 * binary is not on PATH (the benches fall back to a Redis of their own and say so).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { howToInstall } from '../scripts/system-deps.mjs';
import { freePort, pong } from './loopback.js';

export interface PrivateRedis {
  readonly url: string;
  stop(): Promise<void>;
}

export interface PrivateRedisOptions {
  /**
   * `appendonly yes` with this `appendfsync` policy, as a Redis that keeps state should run (its files
   * in a temporary folder, removed at `stop()`).
   * @default none: `appendonly no`, no snapshots, nothing on disk
   */
  readonly appendfsync?: 'always' | 'everysec' | 'no';
}

/** redis-server is not on PATH: the one failure `startPrivateRedis` turns into `undefined`. */
export class RedisServerNotOnPath extends Error {}

/**
 * A private redis-server, answering PING. Rejects at once with `RedisServerNotOnPath` when the binary
 * is not on PATH (the message names it and the one command that installs it), and with the reason
 * when it exits or does not answer within 10 s.
 */
export async function requirePrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = options.appendfsync && mkdtempSync(join(tmpdir(), 'zlink-redis-aof-'));
  const removeDir = (): void => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
  const persistence = dir
    ? ['--appendonly', 'yes', '--appendfsync', options.appendfsync as string, '--dir', dir]
    : ['--appendonly', 'no'];
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence];
  const child: ChildProcess = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  // What it says when it refuses to start (a bad option, a port taken), for the error below.
  let said = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (said = (said + chunk).slice(-2000)));
  // Its files go with it, however it ends.
  const closed = once(child, 'close')
    .catch(() => undefined)
    .then(removeDir);
  try {
    await Promise.race([
      once(child, 'spawn'),
      once(child, 'error').then(([error]) => Promise.reject(error as Error)),
    ]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new RedisServerNotOnPath(`redis-server is not on PATH.\n${howToInstall(['redis-server'])}`, {
      cause: error,
    });
  }
  const deadline = Date.now() + 10000;
  while (!(await pong(port))) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await closed; // its stderr read to the end
      throw new Error(
        `redis-server on port ${port} exited (${child.exitCode ?? child.signalCode}) before answering PING` +
          (said.trim() ? `: ${said.trim()}` : ''),
      );
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await closed;
    },
  };
}

/**
 * `requirePrivateRedis`, or `undefined` when redis-server is not on PATH (a bench then uses a Redis on
 * the standard port and names it in its report). Any other failure — the binary is there but exits or
 * never answers — rejects with its reason: a bench that quietly ran without its store would report
 * figures for something it did not measure.
 */
export async function startPrivateRedis(
  options: PrivateRedisOptions = {},
): Promise<PrivateRedis | undefined> {
  try {
    return await requirePrivateRedis(options);
  } catch (error) {
    if (error instanceof RedisServerNotOnPath) return undefined;
    throw error;
  }
}
