import { errorMessage } from '../core/errors.js';
import type { ZLinkEvents } from '../core/observe/index.js';
import type { DescriptorKind, LocationDescriptor, LocationStore } from '../core/ports/index.js';

export interface DiscoveryConfig {
  readonly store: LocationStore;
  readonly kind: DescriptorKind;
  readonly scope: string;
  readonly fullReadIntervalMs: number;
  readonly events: ZLinkEvents;
  /** Every successful full read, at one point in time: the whole target list, never a delta. */
  readonly onList: (descriptors: LocationDescriptor[]) => void;
}

/**
 * Automatic discovery of one (kind, scope) (docs/protocol.md#discovery,
 * docs/protocol.md#location-store-outage): a full read on every change notification and on an interval, the
 * safety net for notifications that are lost. A read that fails changes nothing — the last list stays, so no
 * connection is added or removed during a store outage — and the first read that succeeds afterwards
 * reconciles everything at once.
 */
export class DescriptorDiscovery {
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => Promise<void>) | undefined;
  /** The read under way; hints and ticks meanwhile ask for one more. */
  private reading: Promise<void> | undefined;
  private again = false;
  private inOutage = false;
  private closed = false;
  /** The descriptors of the last successful read, for snapshots. */
  last: readonly LocationDescriptor[] = [];

  constructor(private readonly config: DiscoveryConfig) {}

  get kind(): DescriptorKind {
    return this.config.kind;
  }

  get scope(): string {
    return this.config.scope;
  }

  /** The last read failed: the last good list is kept. */
  get outage(): boolean {
    return this.inOutage;
  }

  /** Subscribes to hints and reads once; resolves after that first read (which may have failed). */
  async start(): Promise<void> {
    await this.subscribe();
    if (this.closed) {
      // Closed while subscribing (the runtime stopped during its start): leave nothing behind.
      await this.unwatch?.().catch(() => undefined);
      return;
    }
    this.timer = setInterval(() => {
      if (!this.unwatch) void this.subscribe();
      this.read();
    }, this.config.fullReadIntervalMs);
    this.read();
    await this.reading;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.unwatch?.().catch(() => undefined);
  }

  /** Reads now (a hint from this process: something it met is not listed yet). */
  hint(): void {
    this.read();
  }

  /** A hint or a tick: reads now, or once more after the read under way (hints coalesce). */
  private read(): void {
    if (this.closed) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.readNow().finally(() => (this.reading = undefined));
  }

  /** Never rejects: a failed read is an outage, and a list the consumer cannot use is reported. */
  private async readNow(): Promise<void> {
    const { store, kind, scope, events } = this.config;
    try {
      do {
        this.again = false;
        let list: LocationDescriptor[];
        try {
          list = await store.list(kind, scope);
        } catch (error) {
          if (!this.inOutage && !this.closed)
            events.emit({ type: 'discovery', state: 'outage', kind, scope, reason: errorMessage(error) });
          this.inOutage = true;
          return;
        }
        if (this.closed) return;
        const changed = !sameList(this.last, list);
        this.last = list;
        if (this.inOutage) {
          this.inOutage = false;
          events.emit({ type: 'discovery', state: 'recovered', kind, scope, count: list.length });
        } else if (changed) {
          events.emit({ type: 'discovery', state: 'read', kind, scope, count: list.length });
        }
        try {
          this.config.onList(list);
        } catch (error) {
          events.emit({ type: 'discovery', state: 'rejected', kind, scope, reason: errorMessage(error) });
        }
      } while (this.again && !this.closed);
    } catch (error) {
      events.emit({ type: 'discovery', state: 'rejected', kind, scope, reason: errorMessage(error) });
    }
  }

  private async subscribe(): Promise<void> {
    if (this.closed) return;
    try {
      this.unwatch = await this.config.store.watch(this.config.kind, this.config.scope, () => this.read());
    } catch {
      // The store is unreachable: the interval tries again; reads go on regardless.
    }
  }
}

function sameList(a: readonly LocationDescriptor[], b: readonly LocationDescriptor[]): boolean {
  if (a.length !== b.length) return false;
  const key = (d: LocationDescriptor) =>
    `${d.rid}\u0000${d.generation}\u0000${d.revision}\u0000${d.endpoint}`;
  const keys = new Set(a.map(key));
  return b.every((d) => keys.has(key(d)));
}
