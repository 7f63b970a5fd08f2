import type {
  ObjectKey,
  StateAdoptRequest,
  StateAdoptResult,
  StateStore,
  StateWrite,
  StateWriteResult,
} from '../../core/ports/index.js';

/**
 * The one way a node's objects reach a State Store (docs/decisions.md#durable-state): every adopt and
 * write asked for within one event-loop turn leaves in one batch per operation (up to the store's
 * `batchLimit` rows; more go in the next), with at most the store's `concurrency` batches in flight.
 * So a thousand rooms that each changed in one tick cost the store one statement, not a thousand; a
 * lone write waits one `setImmediate` at most.
 *
 * A key is never twice in one batch (the port refuses that, and one statement cannot change a row
 * twice): a second row for a key already in the batch being built waits for the next one. Each row's
 * promise settles exactly once: with the store's answer for it, or rejected with the store's error when
 * the batch got no answer (its outcome is then unknown).
 */
export class StateBatcher {
  private readonly adopts = new RowQueue<StateAdoptRequest, StateAdoptResult>();
  private readonly writes = new RowQueue<StateWrite, StateWriteResult>();
  private inFlight = 0;
  private scheduled = false;
  private closed = false;

  constructor(readonly store: StateStore) {}

  /** The store's answer for one adopt row (see `StateStore.adopt`). */
  adopt(request: StateAdoptRequest): Promise<StateAdoptResult> {
    return this.enqueue(this.adopts, request);
  }

  /** The store's answer for one write row (see `StateStore.write`). */
  write(write: StateWrite): Promise<StateWriteResult> {
    return this.enqueue(this.writes, write);
  }

  /** Rows asked for and not answered yet (queued or in flight). */
  get pending(): number {
    return this.adopts.pending + this.writes.pending;
  }

  /** Refuses new rows; what is queued or in flight still settles. */
  close(): void {
    this.closed = true;
  }

  private enqueue<R extends { readonly key: ObjectKey }, A>(queue: RowQueue<R, A>, row: R): Promise<A> {
    if (this.closed) return Promise.reject(new Error(`${this.store.name}: closed`));
    const answer = queue.push(row);
    this.schedule();
    return answer;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Sends batches while the store takes more in flight: adopts first (an activation waits on each). */
  private flush(): void {
    const { store } = this;
    while (this.inFlight < store.concurrency) {
      if (this.adopts.queued > 0) this.send(this.adopts, (b) => store.adopt(b));
      else if (this.writes.queued > 0) this.send(this.writes, (b) => store.write(b));
      else return;
    }
  }

  private send<R extends { readonly key: ObjectKey }, A>(
    queue: RowQueue<R, A>,
    call: (batch: R[]) => Promise<A[]>,
  ): void {
    const rows = queue.take(this.store.batchLimit);
    this.inFlight++;
    let sent: Promise<A[]>;
    try {
      sent = call(rows.map((r) => r.row));
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent
      .then(
        (results) => {
          rows.forEach((r, i) => {
            const result = results[i];
            if (result === undefined)
              r.reject(new Error(`${this.store.name}: answered ${results.length} of ${rows.length} rows`));
            else r.resolve(result);
          });
        },
        (error: unknown) => {
          for (const r of rows) r.reject(error);
        },
      )
      .finally(() => {
        queue.settled(rows.length);
        this.inFlight--;
        this.flush();
      });
  }
}

interface Queued<R, A> {
  readonly row: R;
  readonly name: string;
  resolve(answer: A): void;
  reject(error: unknown): void;
}

/** The rows of one operation waiting for a batch, in the order they were asked for. */
class RowQueue<R extends { readonly key: ObjectKey }, A> {
  private rows: Queued<R, A>[] = [];
  private sending = 0;

  get queued(): number {
    return this.rows.length;
  }

  get pending(): number {
    return this.rows.length + this.sending;
  }

  push(row: R): Promise<A> {
    const { mesh, kind, id } = row.key;
    return new Promise<A>((resolve, reject) =>
      this.rows.push({ row, name: `${mesh}\u0000${kind}\u0000${id}`, resolve, reject }),
    );
  }

  /** Up to `limit` rows in order, each key once; a repeated key stays queued, in its place. */
  take(limit: number): Queued<R, A>[] {
    const batch: Queued<R, A>[] = [];
    const keys = new Set<string>();
    const kept: Queued<R, A>[] = [];
    for (const r of this.rows) {
      if (batch.length < limit && !keys.has(r.name)) {
        keys.add(r.name);
        batch.push(r);
      } else kept.push(r);
    }
    this.rows = kept;
    this.sending += batch.length;
    return batch;
  }

  settled(n: number): void {
    this.sending -= n;
  }
}
