import type { MeshNodeState, TracePropagation } from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type {
  ChannelHandlerRegistry,
  JobQueue,
  NodeHandlerRegistry,
  PendingRequests,
} from '../../core/calls/index.js';
import type { NormalizedCurve, NormalizedMesh } from '../../core/options/index.js';

/** What a MeshNode is made of (the runtime builds it from the validated options). */
export interface MeshNodeConfig {
  readonly mesh: NormalizedMesh;
  readonly rid: string;
  readonly generation: string;
  readonly channelHandlers: ChannelHandlerRegistry;
  readonly nodeHandlers: NodeHandlerRegistry;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
  readonly pending: PendingRequests;
  readonly sendQueueLimit: number;
  /** Automatic discovery timing (see `DiscoveredPeers`); links are opened only on `setDiscovered`. */
  readonly discovery?: { readonly vanishGraceMs: number; readonly connectAnywayAfterMs: number };
  /** Every change of the node's published state (memberships): the store descriptor follows it. */
  readonly onStateChange?: (state: MeshNodeState) => void;
  /** Trace propagation (OpenTelemetry loaded by the runtime): traced handlers run in their context. */
  readonly tracing?: TracePropagation;
  /** The Spot and Actor types this node hosts, announced in its state. @default none (nothing on the wire) */
  readonly objectTypes?: readonly string[];
  /** CURVE on this node's ROUTER (`security.curve`). @default plain ZMTP */
  readonly curve?: NormalizedCurve;
  /** With CURVE: a key or NodeRid not known here came by (the store may list it by now). */
  readonly unlisted?: () => void;
}
