/**
 * The bounded application job queue: at most `limit` handlers run at once in the process. A receive
 * loop that cannot get a permit stops reading its socket, so zeromq's HWM pushes back on the sender
 * instead of this process buffering without bound. Replies never take a permit.
 */
export class JobQueue {
  private running = 0;
  private waiters: (() => void)[] = [];

  constructor(readonly limit: number) {}

  get active(): number {
    return this.running;
  }

  tryAcquire(): boolean {
    if (this.running >= this.limit) return false;
    this.running++;
    return true;
  }

  /** Resolves once a permit is held. */
  acquire(): Promise<void> {
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Returns a permit. A release without a held permit is ignored (the count never goes negative). */
  release(): void {
    if (this.running === 0) return;
    const next = this.waiters.shift();
    // Hand the permit straight to a waiter so a burst of releases cannot overshoot the limit.
    if (next) next();
    else this.running--;
  }
}
