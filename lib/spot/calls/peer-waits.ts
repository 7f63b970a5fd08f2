import type { MeshLink, NodeRun } from '../../core/index.js';

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

  constructor(private readonly link: MeshLink) {
    link.onPeer((event) => {
      if (event.type !== 'up') return;
      for (const w of [...this.waiters])
        if (w.run.rid === event.peer.rid && w.run.nodeGeneration === event.peer.generation) w.done(true);
    });
  }

  /** Resolves `true` once `run` is a ready peer, `false` after `timeoutMs` or on abort. */
  until(run: NodeRun, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.link.isReady(run.rid, run.nodeGeneration)) return Promise.resolve(true);
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

  /** Ends every wait (`false`): the node is closing. */
  close(): void {
    for (const w of [...this.waiters]) w.done(false);
  }
}
