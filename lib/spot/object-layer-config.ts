import type { PendingRequests } from '../core/calls/index.js';
import type { MeshLink, RelocationStore, StoreHealth } from '../core/ports/index.js';
import type { NormalizedObjectOptions } from '../core/options/index.js';
import type { ObjectHostConfig } from './owner/index.js';
import type { SessionSink } from './session/index.js';

export interface ObjectLayerConfig extends Omit<
  ObjectHostConfig,
  'queueLimit' | 'runtimeCall' | 'sessionPush' | 'publish' | 'watch'
> {
  readonly role: 'client' | 'server';
  readonly options: NormalizedObjectOptions;
  readonly link: MeshLink;
  readonly pending: PendingRequests;
  /** The Relocation Store, when one is registered (moves leave their records there). */
  readonly relocationStore: RelocationStore | undefined;
  /**
   * Whether the store answers (every operation on `store` reports to it): a recovery drops every cached
   * route.
   */
  readonly storeHealth: StoreHealth;
  /** The Session owner's side of this node's session listeners, when it has any. */
  readonly sessions?: SessionSink;
  /** A publish's deadline when its `.async()` names none (the runtime's `requestTimeoutMs`). */
  readonly defaultTimeoutMs: number;
}

export interface CreateOptions {
  /**
   * The NodeRid of the object server to own it; default: this node when it hosts the type, else one that
   * does.
   */
  readonly node?: string;
  /** Handed to `onActivate(ctx)` as `ctx.init`. */
  readonly init?: unknown;
  readonly timeoutMs: number;
}
