import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { closeRedisClient } from '../../lib/store/redis/client.js';
import { freePort } from './index.js';

/** How long a fresh `redis-server` may take to answer PING. */
const READY_TIMEOUT_MS = 10000;

/**
 * A private `redis-server` on a free loopback port, from the binary on PATH, keeping nothing on
 * disk. A test can kill it (an outage), start it again on the same port (recovery, empty), or pause
 * its clients. `stop()` is idempotent and waits for the process to exit.
 */
export class RedisServer {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  private constructor(
    readonly port: number,
    private readonly extraArgs: readonly string[] = [],
    private readonly dir?: string,
  ) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.restart();
    return server;
  }

  /**
   * A node started with `--cluster-enabled yes`, its cluster config file in a temp dir removed by
   * `close()`. No slots are assigned: it answers PING and INFO (`cluster_enabled:1`), not keys.
   */
  static async startClusterNode(): Promise<RedisServer> {
    const dir = await mkdtemp(join(tmpdir(), 'zlink-cluster-'));
    const args = ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')];
    // The bus port is the client port + 10000 unless told: out of range for an OS port above 55535.
    args.push('--cluster-port', String(await freePort()));
    const server = new RedisServer(await freePort(), args, dir);
    try {
      await server.restart();
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Starts (again) on the same port and resolves once it answers PING. */
  async restart(): Promise<void> {
    if (this.child) return;
    const args = [
      ...['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ...this.extraArgs,
    ];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    this.exited = new Promise((done) =>
      child.once('exit', () => {
        if (this.child === child) this.child = undefined;
        done();
      }),
    );
    const failed = new Promise<never>((_, reject) =>
      child.once('error', (error) => reject(new Error(`redis-server could not start: ${error.message}`))),
    );
    await Promise.race([this.waitForPing(), failed]).catch(async (error: unknown) => {
      await this.stop();
      throw new Error(`${String(error)}; stderr: ${stderr}`);
    });
  }

  /** An outage: SIGKILL, as a crash would be; resolves once the process is gone. */
  async stop(): Promise<void> {
    this.child?.kill('SIGCONT');
    this.child?.kill('SIGKILL');
    await this.exited;
  }

  /**
   * Stops (`SIGSTOP`) or resumes (`SIGCONT`) the process: while stopped its connections stay open and
   * every command waits unanswered, as with a server stalled by the host — no error reaches a client.
   */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    this.child?.kill(signal);
  }

  /** Makes every client's commands wait for `ms` (Redis `CLIENT PAUSE`), e.g. to block lease refreshes. */
  async pauseClients(ms: number): Promise<void> {
    const redis = this.client();
    try {
      await redis.call('CLIENT', 'PAUSE', String(ms), 'ALL');
    } finally {
      await closeRedisClient(redis);
    }
  }

  /** Redis's own count of `command` calls since the last `resetStats` (script-run ones included). */
  async commandCalls(command: string): Promise<number> {
    const redis = this.client();
    try {
      const info = await redis.info('commandstats');
      const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info);
      return match ? Number(match[1]) : 0;
    } finally {
      await closeRedisClient(redis);
    }
  }

  /** Zeroes Redis's command counts (`CONFIG RESETSTAT`). */
  async resetStats(): Promise<void> {
    const redis = this.client();
    try {
      await redis.config('RESETSTAT');
    } finally {
      await closeRedisClient(redis);
    }
  }

  /** A plain ioredis client for the test's own checks; the caller closes it (`closeRedisClient`). */
  client(): Redis {
    return new Redis({ host: '127.0.0.1', port: this.port, lazyConnect: false, maxRetriesPerRequest: 1 });
  }

  /** Stops it and removes its temp dir, if any; named `close` so a `Cleanup` list can hold it. */
  async close(): Promise<void> {
    await this.stop();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  private async waitForPing(): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      const redis = new Redis({
        host: '127.0.0.1',
        port: this.port,
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      try {
        await redis.connect();
        if ((await redis.ping()) === 'PONG') return;
      } catch {
        // Not listening yet.
      } finally {
        await closeRedisClient(redis);
      }
      if (Date.now() > deadline)
        throw new Error(`redis-server on ${this.port} did not answer within ${READY_TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
