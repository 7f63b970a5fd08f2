import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** How the demo starts a sample process (it stops them all at the end). */
export type Start = (script: string, args: string[]) => ChildProcess;

/** A sample process that answers one JSON line per JSON command on its stdin. */
export class LineChild {
  private readonly lines: AsyncIterator<string>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    this.lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  }

  async next(): Promise<Record<string, any>> {
    const { value, done } = await this.lines.next();
    if (done) throw new Error(`${this.name} exited early`);
    const message = JSON.parse(value as string) as Record<string, any>;
    if (message.type === 'error') throw new Error(`${this.name}: ${String(message.message)}`);
    return message;
  }

  ask(command: object): Promise<Record<string, any>> {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
    return this.next();
  }
}

/**
 * `ready`, marked handled: a part of the demo starts its processes early and awaits their readiness
 * only when its turn comes, so a failure before then must not count as an unhandled rejection.
 */
export function booting<T>(ready: Promise<T>): Promise<T> {
  ready.catch(() => undefined);
  return ready;
}
