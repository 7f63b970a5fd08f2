import type {
  ClientConnectionSnapshot,
  FanoutLinkSnapshot,
  MeshSnapshot,
  ObjectActivationSnapshot,
  SessionListenerSnapshot,
} from '../core/observe/index.js';
import type { LocationSnapshot } from './location.js';

/*
 * What `ZLinkRuntime.snapshot()` returns, declared, never inferred from the classes that fill it
 * in: the published `.d.ts` names no transport internals. Each topology builds its part.
 */

export type ChannelRole = 'client' | 'server' | 'client_and_server';

/** One ClientServer ChannelName: its Server listener and/or its Client here. */
export interface ClientServerChannelSnapshot {
  readonly channel: string;
  readonly arrangement: 'client-server';
  /** `client_and_server` says both registrations are present; it is not a role of its own. */
  readonly role: ChannelRole;
  readonly server?: {
    readonly endpoint: string;
    readonly serverRid: string;
    readonly generation: string;
    readonly weight: number;
    readonly draining: boolean;
    readonly revision: number;
    readonly activeHandlers: number;
  };
  readonly client?: {
    readonly candidates: number;
    readonly connections: readonly ClientConnectionSnapshot[];
  };
}

/** A classic fanout channel: the publisher's endpoint and counts, each subscriber link's state and counts. */
export interface FanoutChannelSnapshot {
  readonly channel: string;
  readonly publisher?: {
    readonly endpoint: string;
    readonly rid: string;
    readonly published: number;
    readonly queued: number;
    readonly waited: number;
  };
  readonly subscriber?: { readonly publishers: readonly FanoutLinkSnapshot[] };
}

/** The object layer on its mesh: the route cache and the objects this node owns. */
export interface ObjectsSnapshot {
  readonly mesh: string;
  readonly role: 'client' | 'server';
  /** Routes in the positive route cache now. */
  readonly routeCacheSize: number;
  /** No new object work: the owner lease is fenced, or ownership is being re-checked after it. */
  readonly fenced: boolean;
  readonly activations: readonly ObjectActivationSnapshot[];
}

export interface ZLinkSnapshot {
  readonly channels: ClientServerChannelSnapshot[];
  readonly meshes: MeshSnapshot[];
  /** Classic fanout channels. */
  readonly fanout: FanoutChannelSnapshot[];
  /** Present when a `locationStore` is configured and the runtime started. */
  readonly locationStore?: LocationSnapshot;
  /** Present on a started runtime with an object mesh. */
  readonly objects?: ObjectsSnapshot;
  /** Present when `sessions` are configured: each session listener. */
  readonly sessions?: readonly SessionListenerSnapshot[];
  readonly pendingRequests: number;
  readonly lateReplies: number;
  readonly activeHandlers: number;
}
