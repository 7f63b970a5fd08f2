import type { MeshLink, NodeRun } from '../../core/ports/index.js';

/** How many lost runs are remembered; past it the oldest is forgotten (a call to it then waits, bounded). */
const MAX_LOST_RUNS = 1024;

interface Waiter {
  readonly run: NodeRun;
  readonly done: (up: boolean) => void;
}

/**
 * Waits for a node run the store names as an owner to become a ready peer (its link may still be
 * handshaking when a route is read): one `onPeer` subscription for all waiters, each bounded.
 */
export class PeerWaits {
  private readonly waiters = new Set<Waiter>();
  /** Runs that were ready peers and were lost (oldest first, bounded): nothing to wait for. */
  private readonly lost = new Map<string, true>();
  private readonly unsubscribe: () => void;

  constructor(private readonly link: MeshLink) {
    this.unsubscribe = link.onPeer((event) => {
      const key = `${event.peer.rid}\u0000${event.peer.generation}`;
      if (event.type === 'down') {
        this.lost.set(key, true);
        if (this.lost.size > MAX_LOST_RUNS) this.lost.delete(this.lost.keys().next().value as string);
        return;
      }
      this.lost.delete(key);
      if (event.type !== 'up') return;
      for (const w of [...this.waiters])
        if (w.run.rid === event.peer.rid && w.run.nodeGeneration === event.peer.generation) w.done(true);
    });
  }

  /**
   * Resolves `true` once `run` is a ready peer, `false` after `timeoutMs` or on abort (at once for a
   * signal already aborted) — and `false` at once for a run that was a ready peer and was lost: the
   * store may still list it until its lease lapses, but a call must not wait for a process that is
   * gone (it may come back; then it is ready). The caller tells an abort from the rest by its signal.
   */
  until(run: NodeRun, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.link.isReady(run.rid, run.nodeGeneration)) return Promise.resolve(true);
    if (signal?.aborted || this.lost.has(`${run.rid}\u0000${run.nodeGeneration}`))
      return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => waiter.done(false);
      const timer = setTimeout(() => waiter.done(false), timeoutMs);
      const waiter: Waiter = {
        run,
        done: (up) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          this.waiters.delete(waiter);
          resolve(up);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }

  /** Ends every wait (`false`) and stops listening to the link: the node is closing. */
  close(): void {
    this.unsubscribe();
    for (const w of [...this.waiters]) w.done(false);
  }
}
