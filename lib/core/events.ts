/**
 * Observability events: the one place where every event kind is defined and counted.
 * Emission is synchronous and costs a branch when nobody listens.
 */
export type RouteKind = 'client-server' | 'route-mesh' | 'fanout';

/** What happened to a received business record (02 §9 "handler delivery result"). */
export type DeliveryResult =
  | 'ok'
  | 'no_handler'
  | 'decode_error'
  | 'handler_error'
  | 'reply_error'
  | 'drop'
  | 'rejected'
  | 'protocol_error';

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
      /** A RouteMesh peer finished its handshake (`peer_ready`), left (`peer_lost`), or changed its memberships. */
      readonly type: 'peer_ready' | 'peer_lost' | 'peer_state';
      readonly mesh: string;
      readonly rid: string;
      readonly generation: string;
      readonly memberships: readonly { channel: string; weight: number; draining: boolean }[];
      readonly reason?: string;
    }
  | {
      /** A manual peer link closed before ready for good: wrong RID, wrong mesh, or an Object Client pair. */
      readonly type: 'peer_refused';
      readonly mesh: string;
      readonly endpoint: string;
      readonly reason: string;
    }
  | {
      /** The owner lease: `fenced` when no refresh succeeded in time (stop admitting), `held` again after one. */
      readonly type: 'lease';
      readonly state: 'held' | 'fenced';
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
       * when none came for the silence timeout (guide §5.2, 02 §7 liveness).
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
      readonly endpoint: string;
    }
  | {
      readonly type: 'drain';
      /** A ClientServer channel, or a MeshNode's Server memberships (`mesh`). */
      readonly channel?: string;
      readonly mesh?: string;
      readonly phase: 'started' | 'completed' | 'deadline';
    };

export type ZLinkEventType = ZLinkEvent['type'];
export type ZLinkEventListener = (event: ZLinkEvent) => void;

export class ZLinkEvents {
  private listeners: ZLinkEventListener[] = [];
  /** Counts per `type` and per `type:result` (delivery), e.g. `delivery:no_handler`. */
  readonly counts = new Map<string, number>();

  /** Subscribes; returns the unsubscribe function. A throwing listener never breaks the runtime. */
  subscribe(listener: ZLinkEventListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  emit(event: ZLinkEvent): void {
    this.bump(event.type);
    if (event.type === 'delivery') this.bump(`delivery:${event.result}`);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own; the message path goes on.
      }
    }
  }

  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  private bump(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
}
