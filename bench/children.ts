import { type ChildProcess, spawn } from 'node:child_process';
import type { BenchMessage } from './workload/protocol.js';

/** Every child still running; `killAll` ends them (also on the runner's exit and signals). */
const running = new Set<BenchChild>();

interface Waiter {
  readonly type: string;
  readonly resolve: (message: BenchMessage) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

const STDERR_TAIL = 4000;

/**
 * A bench child process (compiled JS run by this Node): JSON lines from its stdout become messages,
 * commands go to its stdin. A `fatal` or `error` message, an exit, or a timeout fails the waiter.
 */
export class BenchChild {
  private readonly proc: ChildProcess;
  private readonly inbox: BenchMessage[] = [];
  private waiter: Waiter | undefined;
  private stderrTail = '';
  private exited: Promise<void>;
  private exitInfo: string | undefined;

  constructor(
    readonly name: string,
    script: string,
    options: { args?: string[]; env?: Record<string, string>; execArgv?: string[] } = {},
  ) {
    this.proc = spawn(process.execPath, [...(options.execArgv ?? []), script, ...(options.args ?? [])], {
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    running.add(this);
    let buffer = '';
    this.proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (line.startsWith('{')) this.deliver(JSON.parse(line) as BenchMessage);
      }
    });
    this.proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL);
    });
    // A runner that stops writing must not fail on a child that is already gone.
    this.proc.stdin?.on('error', () => {});
    this.exited = new Promise((resolve) => {
      // 'close' comes after the child's stdout ended, so its last lines were delivered.
      this.proc.on('close', (code, signal) => {
        running.delete(this);
        this.exitInfo = signal ? `signal ${signal}` : `code ${String(code)}`;
        this.failWaiter(`${this.name} exited (${this.exitInfo})`);
        resolve();
      });
      this.proc.on('error', (error) => {
        running.delete(this);
        this.exitInfo = error.message;
        this.failWaiter(`${this.name} could not run: ${error.message}`);
        resolve();
      });
    });
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  /** Writes one command line to the child's stdin. */
  command(message: BenchMessage): void {
    this.proc.stdin?.write(`${JSON.stringify(message)}\n`);
  }

  /** The next message of `type` (earlier messages of other types are dropped). */
  next(type: string, timeoutMs: number): Promise<BenchMessage> {
    if (this.waiter) throw new Error(`${this.name}: already waiting for ${this.waiter.type}`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => this.failWaiter(`${this.name}: no '${type}' within ${timeoutMs} ms`),
        timeoutMs,
      );
      this.waiter = { type, resolve, reject, timer };
      this.flushInbox();
      if (this.exitInfo !== undefined) this.failWaiter(`${this.name} exited (${this.exitInfo})`);
    });
  }

  /** Asks the child to shut down; kills it when it has not exited within `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    if (this.exitInfo !== undefined) return;
    this.command({ type: 'shutdown' });
    this.proc.stdin?.end();
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  kill(): void {
    if (this.exitInfo === undefined) this.proc.kill('SIGKILL');
  }

  private deliver(message: BenchMessage): void {
    this.inbox.push(message);
    this.flushInbox();
  }

  private flushInbox(): void {
    while (this.waiter && this.inbox.length > 0) {
      const message = this.inbox.shift() as BenchMessage;
      if (message.type === 'fatal' || message.type === 'error') {
        this.failWaiter(`${this.name} reported ${message.type}: ${String(message.message)}`);
      } else if (message.type === this.waiter.type) {
        const { resolve, timer } = this.waiter;
        clearTimeout(timer);
        this.waiter = undefined;
        resolve(message);
      }
    }
  }

  private failWaiter(reason: string): void {
    const waiter = this.waiter;
    if (!waiter) return;
    clearTimeout(waiter.timer);
    this.waiter = undefined;
    waiter.reject(this.error(reason));
  }

  private error(reason: string): Error {
    const tail = this.stderrTail.trim();
    return new Error(tail ? `${reason}\n--- ${this.name} stderr (tail) ---\n${tail}` : reason);
  }
}

/** Kills every child still running (SIGKILL; safe to call from an 'exit' handler). */
export function killAll(): void {
  for (const child of running) child.kill();
}

/** Kill the children however the runner ends: normal exit, an uncaught error or a signal. */
export function killChildrenOnExit(): void {
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}
