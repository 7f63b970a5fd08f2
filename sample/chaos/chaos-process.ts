/**
 * The chaos harness's child processes (see chaos.ts): a guard that kills a server or Redis when the
 * harness goes, the JSON-line child itself, a redis-server under the guard, and small promise helpers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { pong } from '../loopback.js';

/**
 * The guard: runs the command with stdin from /dev/null, reports its pid and exit status as JSON
 * lines, and SIGCONTs + SIGKILLs it once its own stdin (a pipe from this harness) closes — when the
 * harness ends, however it ends.
 */
const GUARD = [
  'exec 3<&0',
  '"$@" </dev/null 3<&- &',
  'p=$!',
  'echo "{\\"type\\":\\"pid\\",\\"pid\\":$p}"',
  '(cat <&3 >/dev/null; kill -CONT $p; kill -KILL $p) >/dev/null 2>&1 &',
  'exec 3<&-',
  'wait $p 2>/dev/null',
  'echo "{\\"type\\":\\"exit\\",\\"status\\":$?}"',
].join('\n');

/** Every child the harness started and that has not exited yet. */
const all = new Set<Proc>();

/**
 * A child process speaking JSON lines on stdout: under the guard (servers and Redis, which the harness
 * SIGSTOPs or SIGKILLs), or directly with a command pipe on stdin (clients, never stopped: they end
 * themselves when that pipe closes, see ../exit-with-parent.ts).
 */
export class Proc {
  readonly child: ChildProcess;
  pid: number | undefined;
  exited = false;
  /** The harness killed it on purpose. */
  expected = false;
  readonly gone: Promise<void>;

  constructor(
    readonly name: string,
    readonly guarded: boolean,
    command: string,
    args: string[],
    onMessage: (message: Record<string, any>) => void,
    onExit: (status: number) => void,
  ) {
    const env = { ...process.env, NODE_OPTIONS: '' };
    this.child = guarded
      ? spawn('sh', ['-c', GUARD, 'zlink-chaos-guard', command, ...args], {
          stdio: ['pipe', 'pipe', 'inherit'],
          env,
        })
      : spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], env });
    if (!guarded) this.pid = this.child.pid;
    all.add(this);
    this.gone = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.child.once('exit', (code, signal) => {
      all.delete(this);
      if (guarded || this.exited) return;
      this.exited = true;
      onExit(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15));
    });
    this.child.stdin!.on('error', () => undefined);
    let buffer = '';
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        const message = JSON.parse(line) as Record<string, any>;
        if (guarded && message.type === 'pid') this.pid = message.pid as number;
        else if (guarded && message.type === 'exit') {
          this.exited = true;
          this.child.stdin!.end();
          onExit(message.status as number);
        } else onMessage(message);
      }
    });
  }

  signal(signal: NodeJS.Signals): void {
    if (this.pid === undefined || this.exited) return;
    try {
      process.kill(this.pid, signal);
    } catch {
      // Already gone.
    }
  }

  /** SIGKILL on purpose (a guard then exits too). */
  kill(): void {
    this.expected = true;
    this.signal('SIGCONT');
    this.signal('SIGKILL');
    this.child.stdin!.end();
  }

  /** A command line to a direct child. */
  send(message: object): void {
    if (!this.exited && !this.guarded) this.child.stdin!.write(`${JSON.stringify(message)}\n`);
  }
}

/** Synchronous, idempotent: nothing the harness started outlives it. */
export function killEverything(): void {
  for (const g of all) {
    g.kill();
    g.child.kill('SIGKILL');
  }
}

/** A promise with its settle functions (Node 20 has no Promise.withResolvers); never unhandled. */
export function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: Error) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * A redis-server on `port` (no persistence) under the guard, once it answers PING; `unasked` runs if it
 * exits without being killed.
 */
export async function startRedisServer(port: number, what: string, unasked: () => void): Promise<Proc> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const r = new Proc(
    'redis',
    true,
    'redis-server',
    [...args, '--loglevel', 'warning'],
    () => undefined,
    () => {
      if (!r.expected) unasked();
    },
  );
  const deadline = Date.now() + 10000;
  while (!(await pong(port))) {
    if (Date.now() > deadline || r.exited)
      throw new Error(`redis-server (${what}) did not answer PING within 10 s`);
    await sleep(20);
  }
  return r;
}
