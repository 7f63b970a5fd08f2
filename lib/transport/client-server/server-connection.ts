import type { Dealer } from 'zeromq';
import { ZLinkError } from '../../core/errors.js';
import { type ServerState, RecordKind, decodeFrame, encodeHello, encodePing } from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { PendingRequests } from '../../core/calls/index.js';
import { dropUnmatchedReply, settleReply } from '../inbound/index.js';
import {
  ReadProgress,
  type SendableSocket,
  SocketPump,
  afterQueuedReads,
  clientDealer,
  connectTo,
  hasFrames,
} from '../io/index.js';
import { type ChannelCurve, reportConnectRefused, watchHandshakes } from '../security/index.js';
import {
  CONNECTING,
  type ConnectionEvent,
  type ConnectionState,
  isConnected,
  isConnecting,
  transition,
} from './server-connection-state.js';
import { ServerLiveness } from './server-liveness.js';
import { replacesState, stateFields, welcomedState } from './server-state.js';
import { HELLO_RETRY_MS, LOSS_READ_GRACE_MS, RETIRE_POLL_MS } from '../timing.js';

export interface ServerConnectionConfig {
  readonly channel: string;
  readonly endpoint: string;
  readonly clientId: string;
  readonly pending: PendingRequests;
  readonly events: ZLinkEvents;
  readonly sendQueueLimit: number;
  /** Called whenever readiness, weight or drain state changes, so candidates are rebuilt. */
  readonly onChange: () => void;
  /**
   * Whether the identity a server confirmed may become ready here (docs/protocol.md#clientserver-handshake):
   * any for a manual endpoint, only a discovered (RID, generation) for a discovered one. `previous` is what
   * this connection confirmed before. Asked again on `recheck()` when the discovered list changes.
   */
  readonly accepts: (
    state: ServerState,
    previous: ServerState | undefined,
    key: string | undefined,
  ) => boolean;
  /** CURVE on this connection's DEALERs. @default plain ZMTP */
  readonly curve?: ChannelCurve;
  /**
   * With CURVE, the server key each new DEALER connects to (see `EndpointTrust.connectKey`: the last
   * one, and whether it was refused); `undefined` when none is known (the DEALER waits, lost).
   */
  readonly connectKey?: (previous: string | undefined, refused: boolean) => string | undefined;
  /** A refused handshake: the store may list another key by now. */
  readonly rediscover?: () => void;
}

/**
 * One Client DEALER to one Server endpoint. Only the client starts the connection
 * (docs/protocol.md#clientserver-handshake). It becomes ready only after the server confirmed ChannelName,
 * Server RID, lifecycle generation, weight and drain state on this very connection
 * (docs/protocol.md#clientserver-handshake); it leaves readiness when the connection drops, and every request
 * it carried ends `RouteError` then — none is resent. Its states and their order are
 * `server-connection-state.ts`; this class runs their effects.
 */
export class ServerConnection {
  /** The current DEALER; replaced after every lost connection (see `readOut`). */
  private dealer: Dealer;
  /** What the current DEALER's receive loop has taken. */
  private reads = new ReadProgress();
  readonly pump: SocketPump;
  private server: ServerState | undefined;
  private current: ConnectionState = CONNECTING;
  /** Runs while `handshaking`. */
  private helloTimer: NodeJS.Timeout | undefined;
  /** Runs while `lost`, once the lost DEALER was read out. */
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly loops = new Set<Promise<void>>();
  /** With CURVE: the key the current DEALER connected to, and whether its handshake was refused. */
  private key: string | undefined;
  private refused = false;
  /** Pings the server while connected, and drops a connection that brought nothing (see `ServerLiveness`). */
  private readonly liveness = new ServerLiveness(
    () => this.pump.force(encodePing()),
    () => this.apply({ type: 'disconnected' }),
    () => this.reads.taken,
  );

  constructor(private readonly config: ServerConnectionConfig) {
    this.dealer = clientDealer(config.endpoint, config.curve?.socket);
    // The pump writes through whichever DEALER is current; a timed-out write (see SEND_RECHECK_MS)
    // is retried only on the DEALER it was meant for — a replaced one belongs to a lost connection.
    let writing = this.dealer;
    const socket: SendableSocket = {
      send: (message) => (writing = this.dealer).send(message),
      mayRetry: (error) =>
        (error as { code?: unknown }).code === 'EAGAIN' && writing === this.dealer && !writing.closed,
    };
    this.pump = new SocketPump(
      socket,
      config.sendQueueLimit,
      `client ${config.channel} → ${config.endpoint}`,
    );
  }

  get endpoint(): string {
    return this.config.endpoint;
  }

  get ready(): boolean {
    return this.current.status === 'ready';
  }

  /** Still on its way to ready (a server that answered for another channel never will be). */
  get connecting(): boolean {
    return isConnecting(this.current);
  }

  /** Connected and answering, but with an identity discovery does not list (yet). */
  get isUnconfirmed(): boolean {
    return this.current.status === 'unconfirmed';
  }

  /**
   * The discovered list changed: an unconfirmed identity may now be listed (ready), a ready one may
   * no longer be (not a candidate). Descriptor state with a larger revision applies like a State record.
   */
  recheck(listed: ServerState | undefined): void {
    const { status } = this.current;
    if (status === 'closed' || status === 'retiring' || !this.server) return;
    if (listed) this.applyState(listed);
    this.apply({ type: 'recheck', accepted: this.config.accepts(this.server, this.server, this.key) });
  }

  /**
   * Leaves for good (docs/protocol.md#lifecycle-generations, or a descriptor that lapsed): no longer a
   * candidate at once; the requests it carries may still get their replies for up to `maxWaitMs`, then it
   * closes and whatever is left ends `RouteError`. Never resends anything.
   */
  async retire(maxWaitMs: number): Promise<void> {
    const { status } = this.current;
    if (status === 'retiring' || status === 'closed') return;
    this.apply({ type: 'retire' });
    const deadline = Date.now() + maxWaitMs;
    while (isConnected(this.current) && Date.now() < deadline && this.config.pending.countRoute(this) > 0) {
      await new Promise((r) => setTimeout(r, RETIRE_POLL_MS));
    }
    await this.close();
    this.config.pending.failRoute(
      this,
      (d) => new ZLinkError('RouteError', `${d}: connection to ${this.config.endpoint} was retired`),
    );
  }

  /** What the server last confirmed; `undefined` before the first welcome. */
  get state(): ServerState | undefined {
    return this.server;
  }

  start(): void {
    this.attach(this.dealer);
  }

  async close(): Promise<void> {
    this.apply({ type: 'close' });
    this.stopHello();
    this.liveness.follow(false);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.pump.close();
    if (!this.dealer.closed) this.dealer.close();
    await Promise.all([...this.loops]);
  }

  private attach(dealer: Dealer): void {
    const watch = this.watch(dealer).finally(() => this.loops.delete(watch));
    this.loops.add(watch);
    this.reads = new ReadProgress();
    const loop = this.receiveLoop(dealer, this.reads).finally(() => this.loops.delete(loop));
    this.loops.add(loop);
    const { endpoint, curve, connectKey } = this.config;
    if (curve !== undefined) {
      this.key = connectKey?.(this.key, this.refused);
      this.refused = false;
      // No key known for the server there (yet): as good as a failed handshake; tried again later.
      if (this.key === undefined) return this.apply({ type: 'disconnected' });
    }
    connectTo(dealer, this.key, () => dealer.connect(endpoint));
  }

  /** The current DEALER's connection events (see `watchHandshakes`); a refused handshake counts as lost. */
  private watch(dealer: Dealer): Promise<void> {
    return watchHandshakes(dealer, {
      handshake: () => {
        if (dealer === this.dealer) this.apply({ type: 'connected' });
      },
      disconnect: () => {
        if (dealer === this.dealer) this.apply({ type: 'disconnected' });
      },
      refused: (reason, _address, code) => {
        if (dealer !== this.dealer) return;
        this.refused = true;
        reportConnectRefused(
          { ...this.config, route: 'client-server' },
          'this client',
          'server',
          reason,
          code,
        );
        this.config.rediscover?.();
        this.apply({ type: 'disconnected' });
      },
    });
  }

  /**
   * Moves to the next state (see `transition`) and runs what entering it does; an ignored event runs nothing.
   */
  private apply(event: ConnectionEvent): void {
    const from = this.current;
    const to = transition(from, event);
    if (to === from) return;
    this.current = to;
    if (from.status === 'handshaking') this.stopHello();
    const up = isConnected(to);
    if (up !== isConnected(from)) this.liveness.follow(up);
    const { channel, endpoint, events } = this.config;
    switch (to.status) {
      case 'handshaking':
        this.sayHello();
        return;
      case 'connecting':
        if (from.status === 'lost') {
          this.dealer = clientDealer(endpoint, this.config.curve?.socket);
          this.attach(this.dealer);
        }
        return;
      case 'ready':
        events.emit({ type: 'server_ready', channel, endpoint, ...stateFields(this.server as ServerState) });
        break;
      case 'unconfirmed':
        if (from.status !== 'ready') return;
        break;
      case 'lost':
        if (from.status === 'lost') return; // what it remembers changed, nothing else
        this.readOut();
        break;
      case 'retiring':
        if (from.status === 'retiring')
          this.readOut(); // its connection dropped
        else if (from.status !== 'ready') return;
        break;
      default:
        return; // mismatched (the welcome reports it), closed (`close` runs its effects)
    }
    if (from.status === 'ready' && to.status !== 'unconfirmed' && this.server) {
      events.emit({ type: 'server_lost', channel, endpoint, ...stateFields(this.server) });
    }
    this.config.onChange();
  }

  private sayHello(): void {
    this.stopHello();
    if (this.current.status !== 'handshaking') return;
    this.pump.force(encodeHello(this.config.channel, this.config.clientId));
    this.helloTimer = setTimeout(() => this.sayHello(), HELLO_RETRY_MS);
  }

  private stopHello(): void {
    if (this.helloTimer) clearTimeout(this.helloTimer);
    this.helloTimer = undefined;
  }

  /** The connection dropped: reads out and closes its DEALER, then (while `lost`) waits to replace it. */
  private readOut(): void {
    this.pump.purge();
    // A write blocked on the lost connection would still go out to whoever answers on this endpoint next (a
    // restarted server, another generation) after its request already ended RouteError. Only closing the
    // socket cancels it, so every connection attempt gets a fresh DEALER
    // (docs/protocol.md#no-resend-after-selection, docs/protocol.md#lifecycle-generations); until then the
    // old one stops reconnecting. Replies that arrived before the loss are read first.
    const { endpoint } = this.config;
    const { dealer, reads } = this;
    try {
      dealer.disconnect(endpoint);
    } catch {
      // Already disconnected.
    }
    void afterQueuedReads(reads, dealer, LOSS_READ_GRACE_MS).then(() => {
      if (!dealer.closed) dealer.close();
      this.config.pending.failRoute(
        this,
        (d) => new ZLinkError('RouteError', `${d}: connection to ${endpoint} was lost`),
      );
      // The replacement waits a growing delay: an endpoint that accepts TCP but fails every
      // handshake must not turn into a storm of new sockets.
      const lost = this.current;
      if (lost.status !== 'lost') return; // closed, or retiring (it closes, never reconnects)
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = undefined;
        this.apply({ type: 'reconnect' });
      }, lost.delayMs);
    });
  }

  private welcome(state: ServerState): void {
    const { channel, endpoint } = this.config;
    const channelMatches = state.channel === channel;
    const previous = this.server;
    if (channelMatches) this.server = state = welcomedState(previous, state);
    // Found in the store is not yet ready: the identity on this very connection must be a listed one.
    const accepted = channelMatches && this.config.accepts(state, previous, this.key);
    this.apply({ type: 'welcome', channelMatches, accepted });
    if (!channelMatches)
      this.protocolError(`server at ${endpoint} serves '${state.channel}', not '${channel}'`);
  }

  private applyState(state: ServerState): void {
    if (!replacesState(this.server, state)) return;
    this.server = state;
    this.config.events.emit({
      type: 'server_state',
      channel: this.config.channel,
      endpoint: this.config.endpoint,
      ...stateFields(state),
    });
    this.config.onChange();
  }

  private async receiveLoop(dealer: Dealer, reads: ReadProgress): Promise<void> {
    const { pending } = this.config;
    for (;;) {
      let message: Buffer[];
      reads.parked = true;
      try {
        message = await dealer.receive();
      } catch {
        return; // closed
      }
      reads.parked = false;
      reads.taken++;
      if (!hasFrames(message, 1, this.protocolError)) continue;
      const decoded = decodeFrame(message[0] as Buffer);
      for (const bad of decoded.malformed) {
        this.protocolError(bad.reason);
      }
      // Indexed, as the other receive loops: an iterator in an async function allocates a result per record.
      const { records } = decoded;
      for (let i = 0; i < records.length; i++) {
        const record = records[i]!;
        switch (record.kind) {
          case RecordKind.Reply:
          case RecordKind.ErrorReply:
            if (!settleReply(pending, record)) this.unmatched(record.correlation);
            break;
          case RecordKind.Welcome:
            this.welcome(record);
            break;
          case RecordKind.State:
            this.applyState(record);
            break;
          case RecordKind.Ping:
            break;
          default:
            // A server never starts a business call toward a client (docs/protocol.md#clientserver-roles): it
            // reaches no handler.
            this.protocolError(`a client does not accept record kind ${record.kind}`);
        }
      }
    }
  }

  /** A record from the server that matches nothing we sent or cannot be read: reported, never delivered. */
  private readonly protocolError = (reason: string): void => {
    this.config.events.emit({
      type: 'protocol_error',
      route: 'client-server',
      channel: this.config.channel,
      endpoint: this.config.endpoint,
      reason,
    });
  };

  private unmatched(correlation: number): void {
    const { events, channel } = this.config;
    dropUnmatchedReply(events, 'client-server', { channel, sourceRid: this.server?.serverRid }, correlation);
  }
}
