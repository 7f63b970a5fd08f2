import type { Router } from 'zeromq';
import { type HandshakeRefusal, refusalDetail, watchHandshakes } from '../security/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { MeshCurve } from './mesh-curve.js';
import type { MeshLiveness } from './mesh-liveness.js';
import type { OutboundLink, PeerTable } from './peer-table.js';
import { REFUSED_HANDSHAKE_RETRY_MS } from '../timing.js';

/**
 * A MeshNode's connections as its ROUTER reports them: an outbound link's connection up or down goes
 * to the peer table, an accepted one is counted, and a handshake that failed for its security is
 * reported (`security_refused`) from each side that can tell why.
 */
export class MeshConnections {
  /** Live accepted connections (outbound ones are counted on their links). */
  accepted = 0;

  constructor(
    private readonly deps: {
      readonly mesh: string;
      readonly table: PeerTable;
      readonly liveness: MeshLiveness;
      readonly events: ZLinkEvents;
      /** This node's CURVE, when it speaks it (told of refused outbound handshakes: see `refusedBy`). */
      readonly curve: MeshCurve | undefined;
      /** Drops an outbound link's connection (and libzmq's own reconnecting): see `retryLater`. */
      readonly disconnect: (link: OutboundLink) => void;
      /** A fresh connection for an outbound link (see `retryLater`). */
      readonly restart: (link: OutboundLink) => void;
    },
  ) {}

  /** Links waiting for a fresh connection after a refused CURVE handshake. */
  private readonly retrying = new Set<OutboundLink>();

  /**
   * An outbound link whose CURVE handshake was refused gets a fresh connection a little later, with the
   * key known then: the refusal is often a race (the node there has not read this node's key from the
   * store yet, or restarted under a new key that this node has just read), and libzmq would retry with
   * the key it was given.
   *
   * Its connection is dropped at once, not when the fresh one starts: libzmq reconnects a refused
   * connection by itself about 100 ms later, with the key it was given, and such an attempt must not
   * linger beside the fresh connection. (When a NodeRid was the routing id, one that finished its
   * handshake after the fresh one took the NodeRid over at the peer and both sides lost each other.)
   */
  private retryLater(link: OutboundLink): void {
    if (this.retrying.has(link)) return;
    this.retrying.add(link);
    this.deps.disconnect(link);
    setTimeout(() => {
      this.retrying.delete(link);
      const { table } = this.deps;
      // Only a link still trying: one admitted, retired or refused for good since is left alone.
      if (table.links.get(link.endpoint) === link && link.status === 'connecting') this.deps.restart(link);
    }, REFUSED_HANDSHAKE_RETRY_MS).unref();
  }

  watch(router: Router, closed: () => boolean): Promise<void> {
    const { table, liveness } = this.deps;
    return watchHandshakes(
      router,
      {
        handshake: (address) => {
          const link = table.links.get(address);
          if (!link) this.accepted++;
          else table.linkUp(link);
        },
        disconnect: (address) => {
          const link = table.links.get(address);
          if (link) table.linkDown(link);
          else {
            this.accepted = Math.max(0, this.accepted - 1);
            // An accepted connection is reported by our own address: ping everyone, and the pipe
            // that is gone answers EHOSTUNREACH.
            liveness.pingAll();
          }
        },
        refused: (reason, address, code) => this.refused(reason, address, code),
      },
      closed,
    );
  }

  private refused(reason: HandshakeRefusal, address: string, code: string): void {
    const link = this.deps.table.links.get(address);
    const outbound = link !== undefined;
    if (link !== undefined && reason !== 'mechanismMismatch') {
      this.deps.curve?.refusedBy(address);
      this.retryLater(link);
    }
    // An accepted connection with a key not known here was reported by the ZAP check already.
    if (reason === 'unknownKey' && !outbound) return;
    const peer = outbound ? `the node at ${address}` : 'a node connecting here';
    const detail = refusalDetail(reason, this.deps.curve !== undefined, 'this node', peer, code);
    this.deps.events.emit({
      type: 'security_refused',
      route: 'route-mesh',
      mesh: this.deps.mesh,
      reason,
      detail,
      endpoint: address,
    });
  }
}
