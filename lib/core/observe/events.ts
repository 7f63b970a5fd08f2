import type { DeliveryResult, RouteKind } from './outcomes.js';
import { ZLinkMetrics } from './metrics.js';

export type { DeliveryResult, RouteKind } from './outcomes.js';

/**
 * Observability events: the one place where every event kind is defined and counted.
 * Emission is synchronous. Per-message events (`selection`, and `delivery` with result `ok`) are
 * built only while a listener asked for them (`perMessage`), so they cost a branch otherwise;
 * their counts live in `ZLinkMetrics`, bumped where the work happens.
 */
export type ZLinkEvent =
  | {
      readonly type: 'delivery';
      readonly result: DeliveryResult;
      readonly route: RouteKind;
      /** The ChannelName; for a Node direct message, the MeshName in `mesh` and no channel. */
      readonly channel?: string;
      readonly mesh?: string;
      readonly sourceRid?: string;
      readonly kind?: 'send' | 'request';
      readonly packet?: string;
      readonly reason?: string;
      /** `drop` of fanout events: how many were lost in one gap. */
      readonly count?: number;
    }
  | {
      /**
       * Per message: which target a call went to and whether the source-local queue took it
       * (docs/protocol.md#what-observability-separates keeps selection and admission apart). `immediate`:
       * queued in the caller's turn; `after_wait`: queued once space freed; `refused`: ended with `code`
       * before queuing.
       */
      readonly type: 'selection';
      readonly route: RouteKind;
      readonly kind: 'send' | 'request';
      /** The ChannelName; absent for a Node direct call (then `mesh` names the namespace). */
      readonly channel?: string;
      readonly mesh?: string;
      /** This process: the MeshNode's RID, or the ClientServer client id. */
      readonly sourceRid: string;
      /** The chosen Server's RID (ClientServer) or peer NodeRid (RouteMesh). */
      readonly targetRid: string | undefined;
      readonly admission: 'immediate' | 'after_wait' | 'refused';
      readonly code?: string;
    }
  | {
      /** A record that matches nothing we sent, or cannot be read; it reaches no handler. */
      readonly type: 'protocol_error';
      readonly route: RouteKind;
      /** ClientServer: the channel; RouteMesh: the mesh, and the peer when it is known. */
      readonly channel?: string;
      readonly mesh?: string;
      readonly peerRid?: string;
      readonly reason: string;
      readonly endpoint?: string;
    }
  | {
      readonly type: 'server_ready' | 'server_lost' | 'server_state';
      readonly channel: string;
      readonly serverRid: string;
      readonly generation: string;
      readonly endpoint: string;
      readonly weight: number;
      readonly draining: boolean;
    }
  | {
      /**
       * A RouteMesh peer finished its handshake (`peer_ready`), left (`peer_lost`), or changed its
       * memberships.
       */
      readonly type: 'peer_ready' | 'peer_lost' | 'peer_state';
      readonly mesh: string;
      readonly rid: string;
      readonly generation: string;
      readonly memberships: readonly { channel: string; weight: number; draining: boolean }[];
      readonly reason?: string;
      /** The peer had said it drains (a graceful stop): on `peer_lost`, a leave rather than a loss. */
      readonly draining?: boolean;
    }
  | {
      /**
       * A peer link closed before ready for good: wrong RID, wrong mesh, or an Object Client pair. On the
       * node that connected, `endpoint` is where; on the node that was connected to (an Object Client
       * pair's hello, answered and not admitted), `endpoint` is absent.
       */
      readonly type: 'peer_refused';
      readonly mesh: string;
      readonly endpoint?: string;
      /** The NodeRid that answered or said hello. */
      readonly rid?: string;
      readonly reason: string;
      /** The link came from automatic discovery, not from `peers`: no configuration named the node. */
      readonly discovered?: boolean;
    }
  | {
      /**
       * A connection refused for its security (CURVE): a key not known here (`unknownKey`), a peer
       * that does not speak what this node speaks (`mechanismMismatch`: `detail` says which side lacks
       * CURVE), a NodeRid claimed by the holder of another key (`ridKeyMismatch`), or a handshake that
       * failed otherwise (`handshakeFailed`). With or without CURVE, on RouteMesh: a connection that
       * named the run of a connected node without proving it is that run, or a connection that is one
       * node's and spoke for another (`ridInUse`). Nothing it sent reaches a handler. Counted per reason.
       * `mesh` on RouteMesh, `channel` on a ClientServer or fanout channel.
       */
      readonly type: 'security_refused';
      readonly route: RouteKind;
      readonly mesh?: string;
      readonly channel?: string;
      readonly reason: 'unknownKey' | 'mechanismMismatch' | 'ridKeyMismatch' | 'handshakeFailed' | 'ridInUse';
      /** The NodeRid, Server RID or publisher RID the peer claimed, when it got that far. */
      readonly peerRid?: string;
      /** The peer's address (an accepted connection) or the endpoint connected to. */
      readonly endpoint?: string;
      readonly detail: string;
    }
  | {
      /**
       * An end-user session (on listener `listener`): `opened` once welcomed, `closed` when a welcomed
       * session ended, `refused` when a connection ended before its Welcome (a bad or late Hello, a
       * refusal by `@OnSessionOpen`, the listener full or draining), `unbound` when a binding of it was
       * lost (`ownerLost`: the bound Actor's owner left the mesh), `sealed` when a bound Actor's move
       * sealed its binding (its messages wait here), `routed` when the move gave it its route (`reason`:
       * `commit` or `abort`), `dropped` when a resumable session's connection was lost (it waits for its
       * client to resume it: docs/sessions.md#resume-after-a-drop) and `resumed` when it came back.
       * `reason` is the close reason
       * (`protocolError`, `idleTimeout`, ...), counted per state and reason (`session:closed:idleTimeout`).
       */
      readonly type: 'session';
      readonly state:
        'opened' | 'closed' | 'refused' | 'unbound' | 'sealed' | 'routed' | 'dropped' | 'resumed';
      readonly listener: string;
      readonly sessionId?: string;
      readonly reason?: string;
      readonly detail?: string;
    }
  | {
      /**
       * The owner lease: `fenced` when no refresh succeeded in time (stop admitting), `held` again after one.
       */
      readonly type: 'lease';
      readonly state: 'held' | 'fenced';
    }
  | {
      /**
       * The store (the Location Store and the object records beside it): `failing` at the first
       * operation that failed or was given up on (`reason`), `recovered` at the first answer after
       * that — when every cached object route is dropped.
       */
      readonly type: 'store';
      readonly state: 'failing' | 'recovered';
      readonly reason?: string;
    }
  | {
      /**
       * Automatic discovery of (`kind`, `scope`): `read` after a full read that changed the target list,
       * `outage` when a read failed (the last list is kept, no new connections are made),
       * `recovered` at the first full read after one, `rejected` when a read's list could not be
       * applied (a bug or a resource limit; reported instead of crashing).
       */
      readonly type: 'discovery';
      readonly state: 'read' | 'outage' | 'recovered' | 'rejected';
      readonly kind: 'server' | 'mesh-node' | 'publisher';
      readonly scope: string;
      /** How many live descriptors the read found (not on `outage`). */
      readonly count?: number;
      readonly reason?: string;
    }
  | {
      /**
       * A fanout subscriber's view of one publisher: `alive` when frames arrive (again), `silent`
       * when none came for the silence timeout (docs/protocol.md#liveness).
       */
      readonly type: 'fanout_publisher';
      readonly state: 'alive' | 'silent';
      readonly channel: string;
      readonly endpoint: string;
      readonly rid?: string;
      readonly generation?: string;
    }
  | {
      readonly type: 'listening';
      readonly channel?: string;
      readonly mesh?: string;
      /** A session listener's name. */
      readonly session?: string;
      readonly endpoint: string;
    }
  | {
      readonly type: 'drain';
      /** A ClientServer channel, or a MeshNode's Server memberships (`mesh`). */
      readonly channel?: string;
      readonly mesh?: string;
      readonly phase: 'started' | 'completed' | 'deadline';
    }
  | {
      /**
       * A call by global id and the positive route cache: `hit` and `miss` per call (per-message
       * events), `invalidated` when an entry leaves before its time, with why (`reason`: a larger
       * StoreVersion, a stale-route answer, a store recovery, the owner's lease or run ending, eviction).
       */
      readonly type: 'object_route';
      readonly result: 'hit' | 'miss' | 'invalidated';
      readonly mesh: string;
      readonly objectKind: 'spot' | 'actor';
      readonly id: string;
      readonly reason?: string;
    }
  | {
      /** An object activation on this node began taking messages, ended, or failed to be created. */
      readonly type: 'object';
      readonly state: 'activated' | 'deactivated' | 'failed';
      readonly mesh: string;
      readonly objectKind: 'spot' | 'actor';
      readonly objectType: string;
      readonly id: string;
      readonly objectGeneration?: number;
      readonly reason?: string;
    }
  | {
      /**
       * A move of an object (`ZLinkObjects.relocate`), on the end that saw it: the source `started` it
       * (its record written, the seal next), got the target's relay-ready, and saw it `committed` —
       * `pauseMs` from the seal to the commit, the time calls to the object waited — or `aborted`
       * (`reason`); the target `opened` it (Ready there). `followed`, per message, on a node that
       * relayed a call on a route the object left (`hops` so far). `recordFailed`: the Relocation
       * Store did not take the move's last write (the move itself is unaffected).
       */
      readonly type: 'object_relocation';
      readonly phase:
        'started' | 'relayReady' | 'committed' | 'aborted' | 'opened' | 'followed' | 'recordFailed';
      readonly mesh: string;
      readonly objectKind: 'spot' | 'actor';
      readonly id: string;
      /** The move's id (not on `followed`: a relay belongs to the route, not to one move). */
      readonly relocationId?: string;
      /** The other end: the target on the source, the source on the target, the next owner on a relay. */
      readonly peerRid?: string;
      readonly pauseMs?: number;
      readonly hops?: number;
      /** On `followed`: the relayed call's packet (`zlink:flush` for a sender keeping its order). */
      readonly packet?: string;
      readonly reason?: string;
    }
  | {
      /**
       * A Logical Multicast event that did not run on a Spot here: `refused` by a subscribed Spot
       * (`code`: `Rejected` for its full queue or a fenced owner, `Unavailable` while it moves or ends),
       * `failed` (its handler threw `code`), or `dropped` (an event record arrived while no Spot here
       * subscribed to its topic: the publisher had not yet heard that the last one went).
       */
      readonly type: 'multicast';
      readonly result: 'refused' | 'failed' | 'dropped';
      readonly mesh: string;
      readonly channel: string;
      readonly topic: string;
      readonly packet: string;
      /** The Spot that refused or failed it; absent on `dropped`. */
      readonly id?: string;
      readonly publisherRid: string;
      readonly code?: string;
      readonly reason?: string;
    };

export type ZLinkEventType = ZLinkEvent['type'];
export type ZLinkEventListener = (event: ZLinkEvent) => void;

export interface SubscribeOptions {
  /**
   * Also receive the per-message events (`selection`, `delivery` `ok`); default `true`. A listener
   * that only logs lifecycle passes `false`, so the message path builds no event for it.
   */
  readonly perMessage?: boolean;
}

interface Listener {
  readonly fn: ZLinkEventListener;
  readonly perMessage: boolean;
}

export class ZLinkEvents {
  private listeners: Listener[] = [];
  /**
   * Counts per `type`, and per `type:result` of delivery failures (`delivery:no_handler`), refusals
   * (`security_refused:ridInUse`), dropped object routes (`object_route:storeRecovered`) and the
   * store's state (`store:recovered`).
   */
  readonly counts = new Map<string, number>();
  readonly metrics = new ZLinkMetrics();
  /** Whether someone listens for per-message events; the message path checks this before building one. */
  perMessage = false;

  /** Subscribes; returns the unsubscribe function. A throwing listener never breaks the runtime. */
  subscribe(listener: ZLinkEventListener, options: SubscribeOptions = {}): () => void {
    this.listeners = [...this.listeners, { fn: listener, perMessage: options.perMessage ?? true }];
    this.perMessage = this.listeners.some((l) => l.perMessage);
    return () => {
      this.listeners = this.listeners.filter((l) => l.fn !== listener);
      this.perMessage = this.listeners.some((l) => l.perMessage);
    };
  }

  emit(event: ZLinkEvent): void {
    const perMessage = isPerMessage(event);
    if (!perMessage) {
      this.bump(event.type);
      if (event.type === 'delivery') this.countFailure(event);
      else if (event.type === 'security_refused') this.bump(`security_refused:${event.reason}`);
      else if (event.type === 'object_route') this.bump(`object_route:${event.reason ?? ''}`);
      else if (event.type === 'store') this.bump(`store:${event.state}`);
      else if (event.type === 'session' && event.reason) this.bump(`session:${event.state}:${event.reason}`);
      else if (event.type === 'multicast') this.bump(`multicast:${event.result}`);
    }
    for (const listener of this.listeners) {
      if (perMessage && !listener.perMessage) continue;
      try {
        listener.fn(event);
      } catch {
        // A listener's failure is its own; the message path goes on.
      }
    }
  }

  private countFailure(event: ZLinkEvent & { type: 'delivery' }): void {
    if (event.result === 'ok') return;
    const n = event.count ?? 1;
    this.bump(`delivery:${event.result}`, n);
    const { failures } = this.metrics.scope(event.route, event.channel, event.mesh).handlers;
    failures.set(event.result, (failures.get(event.result) ?? 0) + n);
  }

  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  private bump(key: string, n = 1): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + n);
  }
}

function isPerMessage(event: ZLinkEvent): boolean {
  return (
    event.type === 'selection' ||
    (event.type === 'delivery' && event.result === 'ok') ||
    (event.type === 'object_route' && event.result !== 'invalidated') ||
    (event.type === 'object_relocation' && event.phase === 'followed')
  );
}
