/**
 * The demo's Location Store: a private `redis-server` on a free loopback port, keeping nothing on
 * disk, when the binary is on PATH. `undefined` when it is not (the demo then uses manual endpoints).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { freePort, pong } from './loopback.js';

export interface PrivateRedis {
  readonly url: string;
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis | undefined> {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  let child: ChildProcess;
  try {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    await Promise.race([
      once(child, 'spawn'),
      once(child, 'error').then(([error]) => Promise.reject(error as Error)),
    ]);
  } catch {
    return undefined; // no redis-server on PATH
  }
  const deadline = Date.now() + 10000;
  while (!(await pong(port))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      return undefined;
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
