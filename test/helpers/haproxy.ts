import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haproxyBinary, howToInstall } from '../../scripts/system-deps.mjs';
import { freePort } from './index.js';

/** One HAProxy frontend: where clients connect, and the gateway port it passes them to with a PROXY header. */
export interface HaproxyRoute {
  readonly name: string;
  /** The gateway's port (on 127.0.0.1). */
  readonly target: number;
  /** `send-proxy` (v1) or `send-proxy-v2`. */
  readonly header: 'v1' | 'v2';
}

/**
 * A real HAProxy (Debian's `haproxy`, which scripts/setup.sh installs) in TCP mode in front of a
 * gateway, one frontend per route on 127.0.0.1, each passing its clients on with a PROXY header:
 * what a gateway behind a load balancer sees. Runs in the foreground as a child; `close` kills it.
 */
export class Haproxy {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    /** Each route's frontend port, by name. */
    readonly ports: ReadonlyMap<string, number>,
    private readonly exited: Promise<void>,
  ) {}

  /**
   * Starts HAProxy with `routes`, and resolves once every frontend accepts connections. Fails naming
   * the install command when HAProxy is missing: a skipped proof would read like a passing one.
   */
  static async start(routes: readonly HaproxyRoute[]): Promise<Haproxy> {
    const binary = haproxyBinary();
    if (binary === undefined)
      throw new Error(`haproxy is not on PATH nor in /usr/sbin.\n${howToInstall(['haproxy'])}`);
    const ports = new Map<string, number>();
    // HAProxy takes a port, not 0: one the OS just gave out and took back (bound again at once below).
    for (const route of routes) ports.set(route.name, await freePort());
    const dir = mkdtempSync(join(tmpdir(), 'zlink-haproxy-'));
    const config = join(dir, 'haproxy.cfg');
    writeFileSync(
      config,
      [
        'global',
        '  maxconn 256',
        'defaults',
        '  mode tcp',
        '  timeout connect 5s',
        '  timeout client 60s',
        '  timeout server 60s',
        ...routes.flatMap((route) => [
          `frontend ${route.name}`,
          `  bind 127.0.0.1:${ports.get(route.name) as number}`,
          `  default_backend ${route.name}_gateway`,
          `backend ${route.name}_gateway`,
          `  server gateway 127.0.0.1:${route.target} ${route.header === 'v1' ? 'send-proxy' : 'send-proxy-v2'}`,
        ]),
        '',
      ].join('\n'),
    );
    const child = spawn(binary, ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const proxy = new Haproxy(child, dir, ports, exited);
    const deadline = Date.now() + 15000;
    for (const port of ports.values()) {
      while (!(await accepts(port))) {
        if (child.exitCode !== null || Date.now() > deadline) {
          await proxy.close();
          throw new Error(`haproxy did not start (exit ${String(child.exitCode)}): ${stderr}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return proxy;
  }

  port(name: string): number {
    return this.ports.get(name) as number;
  }

  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port` now (closed at once). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
