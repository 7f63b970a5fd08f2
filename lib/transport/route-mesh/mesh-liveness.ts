import { encodeMeshPing } from '../../core/index.js';
import { UnreadTime } from '../receive.js';
import type { SocketPump } from '../socket-pump.js';
import type { PeerTable } from './peer-table.js';

/** Liveness: every peer hears from us this often; one silent for `SILENCE_MS` is dropped. */
const PING_INTERVAL_MS = 1000;
const SILENCE_MS = 3000;
/**
 * A tick this much later than its interval follows a stall of this process (see `tick`): longer than
 * event-loop lag under load, shorter than the ~2 s stall that can make a live peer look silent.
 */
const STALL_MS = 1000;

/** The ping timer of one MeshNode, and the silence rule that drops a peer which stopped answering. */
export class MeshLiveness {
  /** Time the node's receive loop waited for job permits, reading nothing (see `tick`). */
  readonly unread = new UnreadTime();
  private timer: NodeJS.Timeout | undefined;
  private lastTick = 0;

  constructor(
    private readonly table: PeerTable,
    private readonly pump: SocketPump,
  ) {}

  /** Starts pinging, once the node reads. */
  start(): void {
    this.lastTick = Date.now();
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
   * Silence counts only while this node reads: not after a tick that comes late (the process was
   * stopped or paused; timers run before I/O), nor while the receive loop waits for a job permit
   * (`UnreadTime`). What the peers sent then is still unread, so that time is not held against them.
   */
  private readonly tick = (): void => {
    const now = Date.now();
    const late = now - this.lastTick - PING_INTERVAL_MS;
    const unread = Math.min(now - this.lastTick, this.unread.take(now) + (late > STALL_MS ? late : 0));
    this.lastTick = now;
    for (const peer of this.table.peers.values()) {
      peer.lastHeard = Math.min(now, peer.lastHeard + unread);
      if (now - peer.lastHeard > SILENCE_MS) this.table.lose(peer, `silent for ${SILENCE_MS} ms`);
      else this.pump.force(encodeMeshPing(), peer.route.pipe);
    }
  };
}
