import { PING_INTERVAL_MS, SILENCE_MS } from '../timing.js';
import { encodeMeshPing } from '../../core/wire/index.js';
import { SilenceClock, heardBy } from '../liveness/index.js';
import type { SocketPump } from '../io/index.js';
import type { PeerTable } from './peer-table.js';

/** The ping timer of one MeshNode, and the silence rule that drops a peer which stopped answering. */
export class MeshLiveness {
  private readonly clock = new SilenceClock();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly table: PeerTable,
    private readonly pump: SocketPump,
  ) {}

  /** Time the node's receive loop waited for job permits, reading nothing (see `SilenceClock`). */
  get unread(): SilenceClock['unread'] {
    return this.clock.unread;
  }

  /** Starts pinging, once the node reads. */
  start(): void {
    this.clock.reset(Date.now());
    this.timer = setInterval(this.tick, PING_INTERVAL_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Pings every peer now: a pipe that is gone answers EHOSTUNREACH. */
  pingAll(): void {
    for (const peer of this.table.peers.values()) this.pump.force(encodeMeshPing(), peer.route.pipe);
  }

  /**
   * Pings every peer; drops the ones silent past the limit (a stuck process keeps its TCP alive).
   * Silence counts only while this node reads (see `SilenceClock`).
   */
  private readonly tick = (): void => {
    const now = Date.now();
    const credit = this.clock.credit(now);
    for (const peer of this.table.peers.values()) {
      peer.lastHeard = heardBy(peer.lastHeard, credit, now);
      if (now - peer.lastHeard > SILENCE_MS) this.table.lose(peer, `silent for ${SILENCE_MS} ms`);
      else this.pump.force(encodeMeshPing(), peer.route.pipe);
    }
  };
}
