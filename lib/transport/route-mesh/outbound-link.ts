/**
 * `connecting` until zeromq reports the connection, `handshaking` until the welcome, then `ready`;
 * `retired` when the peer's own link to us is the one kept, `refused` for good; `unconfirmed` when
 * the node that answered is not (yet) a listed identity (see `PeerHost.accepts`).
 */
import { Buffer } from 'node:buffer';

export type LinkStatus = 'connecting' | 'handshaking' | 'ready' | 'retired' | 'refused' | 'unconfirmed';

export type LinkEvent =
  /** zeromq reported the connection up: a connecting link starts its handshake. */
  | 'connected'
  /** The connection dropped and took no peer with it: a handshake under way starts over. */
  | 'dropped'
  /** The welcome admitted the node that answered (a connecting or handshaking link only). */
  | 'admitted'
  /** The welcome named a node not (yet) admitted here: a listed identity or a superseded run. */
  | 'unlisted'
  /** The listed identities changed: an unconfirmed link asks again. */
  | 'reconfirm'
  /** The pair's other link is the one kept (see `initiatorWins`). */
  | 'retire'
  /** Its peer was lost: the link starts over with a fresh connection. */
  | 'restart'
  /** The welcome refused the node for good, or the link's descriptor is gone. */
  | 'refuse';

/** Whether a link waits for the welcome to its hello (a welcome decides it now). */
export function awaitsWelcome(status: LinkStatus): boolean {
  return status === 'connecting' || status === 'handshaking';
}

/** The link's next status; `status` itself when the event does not apply to it. Pure. */
export function nextLinkStatus(status: LinkStatus, event: LinkEvent): LinkStatus {
  switch (event) {
    case 'connected':
      return status === 'connecting' ? 'handshaking' : status;
    case 'dropped':
      return status === 'handshaking' || status === 'unconfirmed' ? 'connecting' : status;
    case 'admitted':
      return awaitsWelcome(status) ? 'ready' : status;
    case 'unlisted':
      return awaitsWelcome(status) ? 'unconfirmed' : status;
    case 'reconfirm':
      return status === 'unconfirmed' ? 'handshaking' : status;
    case 'retire':
      return 'retired';
    case 'restart':
      return 'connecting';
    case 'refuse':
      return 'refused';
  }
}

/**
 * An outbound peer link: our ROUTER's connection to a peer endpoint. Its pipe is named
 * `ep:<attempt>.<random>:<endpoint>` on our side (the peer may be known by endpoint alone); the peer
 * sees a random routing id of its own (see `connectLink`). Every connect gets new names: libzmq aborts
 * the process when a connect reuses the routing id of a pipe that is still being torn down. Its
 * status changes only through `move`.
 */
export class OutboundLink {
  /** The current attempt's pipe name (see `connectLink`). */
  pipe = Buffer.alloc(0);
  /** zeromq reported the connection up (and not down since). */
  connected = false;
  /** Repeats the hello while `handshaking`; stopped whenever the link leaves it. */
  helloTimer: NodeJS.Timeout | undefined;
  private current: LinkStatus = 'connecting';
  private answered: string | undefined;
  /** Which node the welcome refused for good, and why (a Node direct call to that NodeRid says so). */
  refusal: { readonly rid: string; readonly why: string } | undefined;
  /**
   * The revision of this node's state that the first hello of the handshake carried (a hello tells the
   * node there our state): cleared when a welcome admits the node (see `PeerTable.onWelcome`).
   */
  helloRevision: number | undefined;

  constructor(
    readonly endpoint: string,
    readonly expectedRid: string | undefined,
    /** Opened for a Location Store descriptor (not a configured peer): it goes when the descriptor does. */
    readonly discovered: boolean,
    /** Connect attempts so far: the next pipe name is `ep:<attempt + 1>.<random>:<endpoint>`. */
    public attempt: number,
  ) {}

  get status(): LinkStatus {
    return this.current;
  }

  /** The NodeRid that answered on this link (kept once admitted, through a restart). */
  get peerRid(): string | undefined {
    return this.answered;
  }

  /** Applies `event` (see `nextLinkStatus`); whether the status changed. */
  move(event: LinkEvent): boolean {
    const next = nextLinkStatus(this.current, event);
    if (next === this.current) return false;
    if (this.current === 'handshaking') this.stopHello();
    this.current = next;
    return true;
  }

  /** The welcome refused node `rid` for good, for `why`. */
  refuse(rid: string, why: string): void {
    this.refusal = { rid, why };
    this.move('refuse');
  }

  /** The welcome admitted `rid` on this link: it is ready (the table may retire it at once). */
  admit(rid: string): void {
    this.answered = rid;
    this.helloRevision = undefined;
    this.move('admitted');
  }

  stopHello(): void {
    if (this.helloTimer) clearTimeout(this.helloTimer);
    this.helloTimer = undefined;
  }
}
