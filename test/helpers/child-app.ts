import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** Compiled fixtures (see test/global-setup.mjs) live here, mirroring the source tree. */
export const FIXTURES_BUILD = resolve(process.cwd(), '.fixtures-build/test/fixtures');

export interface ChildMessage {
  readonly type: string;
  readonly [key: string]: unknown;
}

/**
 * A Nest app running in its own OS process, speaking JSON lines: it writes messages on stdout and
 * takes commands on stdin. Every wait is bounded; `kill` is idempotent.
 */
export class ChildApp {
  private readonly child: ChildProcess;
  private readonly inbox: ChildMessage[] = [];
  private readonly waiters: { type: string; resolve: (m: ChildMessage) => void }[] = [];
  /** Every `log` message so far, in the order the child wrote them (never in the inbox). */
  readonly logs: ChildMessage[] = [];
  private readonly logWaiters = new Set<() => void>();
  private stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once the process has exited and its stdout/stderr are read to the end. */
  readonly closed: Promise<void>;

  constructor(
    readonly name: string,
    script: string,
    args: unknown,
  ) {
    this.child = spawn(process.execPath, [resolve(FIXTURES_BUILD, script)], {
      env: { ...process.env, NODE_OPTIONS: '', ZLINK_E2E_ARGS: JSON.stringify(args) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.exited = new Promise((done) => this.child.once('exit', (code, signal) => done({ code, signal })));
    this.closed = new Promise((done) => this.child.once('close', () => done()));
    let buffer = '';
    this.child.stdout?.setEncoding('utf8');
    this.child.stdout?.on('data', (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.startsWith('{')) this.deliver(JSON.parse(line) as ChildMessage);
      }
    });
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-4000);
    });
  }

  /** Whether the process has not exited yet. */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  send(command: ChildMessage): void {
    this.child.stdin?.write(`${JSON.stringify(command)}\n`);
  }

  /** Resolves with the next message of `type`; rejects on `fatal`/`error`, exit, or after `timeoutMs`. */
  next(type: string, timeoutMs = 15000): Promise<ChildMessage> {
    const index = this.inbox.findIndex((m) => m.type === type || m.type === 'fatal' || m.type === 'error');
    if (index >= 0) return this.check(this.inbox.splice(index, 1)[0] as ChildMessage, type);
    return new Promise<ChildMessage>((resolveMessage, reject) => {
      const timer = setTimeout(() => {
        remove();
        reject(new Error(`${this.name}: no '${type}' within ${timeoutMs} ms; stderr: ${this.stderr}`));
      }, timeoutMs);
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        remove();
        reject(
          new Error(
            `${this.name} exited (${code ?? signal}) while waiting for '${type}'; stderr: ${this.stderr}`,
          ),
        );
      };
      const waiter = {
        type,
        resolve: (m: ChildMessage) => {
          remove();
          this.check(m, type).then(resolveMessage, reject);
        },
      };
      const remove = (): void => {
        clearTimeout(timer);
        this.child.off('exit', onExit);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
      };
      this.child.once('exit', onExit);
      this.waiters.push(waiter);
    });
  }

  /** Sends a command and waits for the reply message of the same type. */
  async call(command: ChildMessage, timeoutMs?: number): Promise<ChildMessage> {
    this.send(command);
    return this.next(command.type, timeoutMs);
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /**
   * Resolves with the first `log` message (from `from` on) that `match` accepts, or rejects after
   * `timeoutMs` or when the child exits first.
   */
  async waitLog(match: (m: ChildMessage) => boolean, timeoutMs = 15000, from = 0): Promise<ChildMessage> {
    let seen = from;
    const scan = (): ChildMessage | undefined => {
      for (; seen < this.logs.length; seen++)
        if (match(this.logs[seen] as ChildMessage)) return this.logs[seen];
      return undefined;
    };
    const found = scan();
    if (found) return found;
    return new Promise<ChildMessage>((resolveLog, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.logWaiters.delete(check);
        this.child.off('exit', onExit);
      };
      const check = (): void => {
        const m = scan();
        if (m) {
          done();
          resolveLog(m);
        }
      };
      const onExit = (): void => {
        done();
        reject(new Error(`${this.name} exited while waiting for a log line; stderr: ${this.stderr}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(`${this.name}: no matching log line within ${timeoutMs} ms; stderr: ${this.stderr}`),
        );
      }, timeoutMs);
      this.logWaiters.add(check);
      this.child.once('exit', onExit);
    });
  }

  private deliver(message: ChildMessage): void {
    if (message.type === 'log') {
      this.logs.push(message);
      for (const check of [...this.logWaiters]) check();
      return;
    }
    const waiter = this.waiters.find(
      (w) => w.type === message.type || message.type === 'fatal' || message.type === 'error',
    );
    if (waiter) waiter.resolve(message);
    else this.inbox.push(message);
  }

  private check(message: ChildMessage, type: string): Promise<ChildMessage> {
    if (message.type !== type) {
      return Promise.reject(
        new Error(`${this.name}: ${message.type} while waiting for '${type}': ${String(message.message)}`),
      );
    }
    return Promise.resolve(message);
  }
}

/** The lines of an execution log a child process appends to (empty when it wrote none). */
export function readLog(path: string): string[] {
  try {
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0);
  } catch {
    return [];
  }
}
