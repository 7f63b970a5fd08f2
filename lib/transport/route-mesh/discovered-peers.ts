import { Buffer } from 'node:buffer';
import { errorMessage } from '../../core/errors.js';
import type { MeshNodeState } from '../../core/wire/index.js';
import { compareIds } from '../../core/calls/index.js';
import type { MeshNodeDescriptor } from '../../core/ports/index.js';
import { VanishGrace, byEndpoint } from '../liveness/index.js';
import { clientPair } from './object-client-rule.js';
import type { OutboundLink, PeerTable } from './peer-table.js';

export interface DiscoveredPeersConfig {
  readonly rid: string;
  /** This node's state now: an Object Client does not connect to another (`clientPair`). */
  readonly own: () => MeshNodeState;
  readonly table: PeerTable;
  readonly connect: (link: OutboundLink) => void;
  readonly report: (reason: string) => void;
  /** How long a ready link whose descriptor vanished stays (its owner may be writing it again). */
  readonly vanishGraceMs: number;
  /**
   * How long the larger NodeRid waits for the smaller one to connect before connecting itself
   * (the smaller one may use manual peers only and never read the store).
   */
  readonly connectAnywayAfterMs: number;
}

/**
 * The MeshNodes of one MeshName the Location Store lists (docs/protocol.md#discovery,
 * docs/protocol.md#mesh-join): links to them are opened from the node's ROUTER like manual peers, but a
 * link's peer is admitted only when the NodeRid and generation that answered are listed, and the link goes
 * when its descriptor does. Of two nodes that list each other, the byte-wise smaller NodeRid connects, so
 * they do not both start at once.
 */
export class DiscoveredPeers {
  /** The last list by endpoint. */
  private listed = new Map<string, MeshNodeDescriptor[]>();
  private readonly firstSeen = new Map<string, number>();
  private readonly vanishing: VanishGrace<OutboundLink>;
  private readonly ownId: Buffer;

  constructor(private readonly config: DiscoveredPeersConfig) {
    this.ownId = Buffer.from(config.rid, 'utf8');
    this.vanishing = new VanishGrace(config.vanishGraceMs);
  }

  /** Whether a discovered link may admit the node that answered (a configured link admits any). */
  accepts(link: OutboundLink, state: MeshNodeState): boolean {
    if (!link.discovered) return true;
    const listed = this.listed.get(link.endpoint);
    if (listed) return listed.some((d) => d.rid === state.rid && d.generation === state.generation);
    const peer = this.config.table.peers.get(state.rid);
    // Kept through the grace after its descriptor vanished: only the run it had confirmed.
    return this.vanishing.isMissing(link) && peer?.state.generation === state.generation;
  }

  /** One full read of the mesh's descriptors (never called during a store outage). */
  set(descriptors: readonly MeshNodeDescriptor[]): void {
    const { table, rid } = this.config;
    const now = Date.now();
    const listed = byEndpoint(descriptors, (d) => d.rid !== rid);
    const seen = new Set<string>();
    for (const list of listed.values()) {
      for (const d of list) {
        const key = `${d.rid}\u0000${d.generation}`;
        seen.add(key);
        if (!this.firstSeen.has(key)) this.firstSeen.set(key, now);
      }
    }
    for (const key of this.firstSeen.keys()) if (!seen.has(key)) this.firstSeen.delete(key);
    this.listed = listed;

    for (const [endpoint, list] of listed) {
      const link = table.links.get(endpoint);
      if (link) {
        this.vanishing.listed(link);
        table.reconfirm(link);
      } else if (list.some((d) => this.shouldConnect(d, now))) {
        const added = table.addLink(endpoint, undefined, true);
        try {
          this.config.connect(added);
        } catch (error) {
          // zeromq refused it (or had no socket to give): no link; the next read tries again.
          table.removeLink(added, `cannot connect: ${errorMessage(error)}`);
          this.config.report(`cannot connect to ${endpoint}: ${errorMessage(error)}`);
        }
      }
    }
    for (const link of [...table.links.values()]) {
      if (!link.discovered || listed.has(link.endpoint)) continue;
      if (this.vanishing.mustGo(link, link.status === 'ready', now))
        table.removeLink(link, `its descriptor left the Location Store`);
    }
  }

  private shouldConnect(d: MeshNodeDescriptor, now: number): boolean {
    // Its welcome would refuse the link: two Object Clients have nothing to say to each other.
    if (clientPair(this.config.own(), d)) return false;
    const peer = this.config.table.peers.get(d.rid);
    if (peer?.state.generation === d.generation) return false; // it connected to us already
    if (compareIds(this.ownId, Buffer.from(d.rid, 'utf8')) < 0) return true;
    const since = this.firstSeen.get(`${d.rid}\u0000${d.generation}`) ?? now;
    return now - since >= this.config.connectAnywayAfterMs;
  }
}
