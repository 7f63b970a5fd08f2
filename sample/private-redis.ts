/**
 * The demo's Location Store: a private `redis-server` on a free loopback port, keeping nothing on
 * disk, when the binary is on PATH. `undefined` when it is not (the demo then uses manual endpoints).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, createServer } from 'node:net';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Whether something on `port` answers PING with PONG. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

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
