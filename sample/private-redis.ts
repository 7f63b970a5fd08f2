/**
 * The demo's Location Store: a private `redis-server` on a free loopback port, keeping nothing on
 * disk. `requirePrivateRedis` fails naming what is wrong; `startPrivateRedis` is `undefined` instead
 * (the benches skip their store parts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { howToInstall } from '../scripts/system-deps.mjs';
import { freePort, pong } from './loopback.js';

export interface PrivateRedis {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * A private redis-server, answering PING. Rejects at once when the binary is not on PATH (the message
 * names it and the one command that installs it), or when it does not answer within 10 s.
 */
export async function requirePrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child: ChildProcess = spawn('redis-server', args, { stdio: 'ignore' });
  try {
    await Promise.race([
      once(child, 'spawn'),
      once(child, 'error').then(([error]) => Promise.reject(error as Error)),
    ]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new Error(`redis-server is not on PATH.\n${howToInstall(['redis-server'])}`, { cause: error });
  }
  const deadline = Date.now() + 10000;
  while (!(await pong(port))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** `requirePrivateRedis`, or `undefined` when there is none to be had. */
export function startPrivateRedis(): Promise<PrivateRedis | undefined> {
  return requirePrivateRedis().catch(() => undefined);
}
