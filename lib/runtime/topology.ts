import type { TracePropagation } from '../core/wire/index.js';
import type { LocationDescriptor } from '../core/ports/index.js';
import type { RuntimeLocation } from './location.js';

/** What a topology's `bind` may use: whether the start still runs, the store, trace propagation. */
export interface BindContext {
  /** False once `close()` came during the start: from then on nothing more is opened. */
  readonly stillStarting: () => boolean;
  /** Present with a `locationStore`: descriptors follow their state, admission follows the lease. */
  readonly location: RuntimeLocation | undefined;
  readonly tracing: TracePropagation | undefined;
}

/**
 * One arrangement of the runtime (ClientServer, RouteMesh, fanout; later Spots). `ZLinkRuntime`
 * walks its topologies phase by phase, in the order it lists them, so the start and stop order is
 * written in one place (`ZLinkRuntime.doStart` / `close`):
 *
 * 1. `bind` every topology — listeners first, so a local Client can reach its own Server;
 * 2. publish every topology's `descriptors` in one Location Store write — only once every listener
 *    is bound, so a descriptor always names a live endpoint;
 * 3. `connect` every topology (manual endpoints and peers; this may throw `Configuration`);
 * 4. `discover` — start automatic discovery, and wait for each first read;
 *
 * and on the way down: the Location Store closes first (others stop finding this process), then
 * `close` every topology in the same order. `drain` runs on every topology at once.
 */
export interface Topology {
  /**
   * Binds every listener; a bind failure is `Configuration` naming the listen option, `Shutdown` after a
   * close.
   */
  bind(context: BindContext): Promise<void>;
  /** What this topology publishes in the Location Store, read after `bind`. */
  descriptors(): LocationDescriptor[];
  /** Opens the outbound side towards configured endpoints and peers; never waits. */
  connect(): void;
  /** Starts automatic discovery where asked for; each promise settles after its first read. */
  discover(location: RuntimeLocation): Promise<unknown>[];
  /** Drains the local Server roles (docs/protocol.md#drain) up to `deadlineMs`; Client roles keep working. */
  drain(deadlineMs: number): Promise<void>;
  /** Closes every socket; also right for a topology whose start failed half-way (or never bound). */
  close(): Promise<void>;
}
