import { Dealer } from 'zeromq';
import {
  type PendingRequests,
  type ServerState,
  type ZLinkEvents,
  RecordKind,
  ZLinkError,
  decodeFrame,
  encodeHello,
} from '../../core/index.js';
import { settleReply } from '../replies.js';
import { LOSS_READ_GRACE_MS, hasFrames, whileReadable } from '../receive.js';
import { type SendableSocket, SocketPump } from '../socket-pump.js';

/** How often a connected but not yet confirmed connection repeats its hello. */
const HELLO_RETRY_MS = 250;
/** Wait before replacing a lost connection's DEALER: doubles per failure, back to the start on a welcome. */
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;
/**
 * ZMTP heartbeats: a server that stops answering (hung, SIGSTOPped, cut off) is declared lost after
 * this silence, so its requests end `RouteError` instead of each waiting out its own timeout.
 */
const HEARTBEAT_INTERVAL_MS = 1000;
/** zeromq messages a DEALER holds for its server before the pump waits. */
const SEND_HWM_MESSAGES = 32;
const HEARTBEAT_TIMEOUT_MS = 3000;

export interface ServerConnectionConfig {
  readonly channel: string;
  readonly endpoint: string;
  readonly clientId: string;
  readonly pending: PendingRequests;
  readonly events: ZLinkEvents;
  readonly sendQueueLimit: number;
  /** Called whenever readiness, weight or drain state changes, so candidates are rebuilt. */
  readonly onChange: () => void;
}

/**
 * One Client DEALER to one Server endpoint. Only the client starts the connection (03 §3.1).
 * It becomes ready only after the server confirmed ChannelName, Server RID, lifecycle generation,
 * weight and drain state on this very connection (03 §3.2); it leaves readiness when the
 * connection drops, and every request it carried ends `RouteError` then — none is resent.
 */
export class ServerConnection {
  /** The current DEALER; replaced after every lost connection (see `onDisconnected`). */
  private dealer: Dealer;
  readonly pump: SocketPump;
  private server: ServerState | undefined;
  private connected = false;
  private isReady = false;
  private helloTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectDelay = RECONNECT_MIN_MS;
  /** The server answered for another channel: this endpoint will never be a candidate. */
  private mismatched = false;
  private readonly loops = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly config: ServerConnectionConfig) {
    this.dealer = newDealer(config.endpoint);
    // The pump writes through whichever DEALER is current.
    const socket: SendableSocket = { send: (message) => this.dealer.send(message) };
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
    return this.isReady;
  }

  /** Still on its way to ready (a server that answered for another channel never will be). */
  get connecting(): boolean {
    return !this.isReady && !this.mismatched && !this.closed;
  }

  /** What the server last confirmed; `undefined` before the first welcome. */
  get state(): ServerState | undefined {
    return this.server;
  }

  start(): void {
    this.attach(this.dealer);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopHello();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.isReady = false;
    this.pump.close();
    if (!this.dealer.closed) this.dealer.close();
    await Promise.all([...this.loops]);
  }

  private attach(dealer: Dealer): void {
    const watch = this.watch(dealer).finally(() => this.loops.delete(watch));
    this.loops.add(watch);
    dealer.connect(this.config.endpoint);
    const loop = this.receiveLoop(dealer).finally(() => this.loops.delete(loop));
    this.loops.add(loop);
  }

  /**
   * Connection events, read with `receive()`: zeromq.js's `events.on()` mode installs its emitter
   * once per process on the native Observer prototype, bound to the `require` of the first module
   * instance that used it, which breaks once that instance is gone (e.g. between jest test files).
   * The loop ends when the socket closes (its observer ends with it).
   */
  private async watch(dealer: Dealer): Promise<void> {
    const events = dealer.events;
    try {
      while (!events.closed) {
        const event = await events.receive();
        if (dealer !== this.dealer) continue;
        if (event.type === 'handshake') this.onConnected();
        else if (event.type === 'disconnect') this.onDisconnected();
      }
    } catch {
      // The observer closed with its socket.
    }
  }

  private onConnected(): void {
    if (this.closed) return;
    this.connected = true;
    this.sayHello();
  }

  private sayHello(): void {
    this.stopHello();
    if (this.closed || !this.connected || this.isReady) return;
    this.pump.force(encodeHello(this.config.channel, this.config.clientId));
    this.helloTimer = setTimeout(() => this.sayHello(), HELLO_RETRY_MS);
  }

  private stopHello(): void {
    if (this.helloTimer) clearTimeout(this.helloTimer);
    this.helloTimer = undefined;
  }

  private onDisconnected(): void {
    if (this.closed) return;
    this.connected = false;
    this.stopHello();
    const wasReady = this.isReady;
    this.isReady = false;
    this.pump.purge();
    // A write blocked on the lost connection would still go out to whoever answers on this endpoint
    // next (a restarted server, another generation) after its request already ended RouteError.
    // Only closing the socket cancels it, so every connection attempt gets a fresh DEALER (03 §4.1, §7);
    // until then the old one stops reconnecting. Replies that arrived before the loss are read first.
    const { channel, endpoint } = this.config;
    const dealer = this.dealer;
    try {
      dealer.disconnect(endpoint);
    } catch {
      // Already disconnected.
    }
    void whileReadable(dealer, LOSS_READ_GRACE_MS).then(() => {
      if (!dealer.closed) dealer.close();
      this.config.pending.failRoute(
        this,
        (d) => new ZLinkError('RouteError', `${d}: connection to ${endpoint} was lost`),
      );
      // The replacement waits a growing delay: an endpoint that accepts TCP but fails every
      // handshake must not turn into a storm of new sockets.
      if (this.closed) return;
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = undefined;
        if (this.closed) return;
        this.dealer = newDealer(endpoint);
        this.attach(this.dealer);
      }, this.reconnectDelay);
      this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_MAX_MS);
    });
    if (wasReady && this.server) {
      this.config.events.emit({ type: 'server_lost', channel, endpoint, ...pickState(this.server) });
    }
    this.config.onChange();
  }

  private welcome(state: ServerState): void {
    const { channel, endpoint, events } = this.config;
    if (state.channel !== channel) {
      // The answer is definitive for this connection: stop repeating hello (a reconnect starts over).
      this.stopHello();
      this.mismatched = true;
      this.protocolError(`server at ${endpoint} serves '${state.channel}', not '${channel}'`);
      return;
    }
    const previous = this.server;
    // A welcome from the same generation never rolls state back (03 §4.2).
    if (previous && previous.generation === state.generation && state.revision < previous.revision)
      state = previous;
    this.server = state;
    this.mismatched = false;
    this.isReady = this.connected;
    if (this.isReady) this.reconnectDelay = RECONNECT_MIN_MS;
    this.stopHello();
    if (this.isReady) events.emit({ type: 'server_ready', channel, endpoint, ...pickState(state) });
    this.config.onChange();
  }

  private applyState(state: ServerState): void {
    const current = this.server;
    // Only a larger revision within the same lifecycle generation applies (03 §4.2).
    if (!current || state.generation !== current.generation || state.revision <= current.revision) return;
    this.server = state;
    this.config.events.emit({
      type: 'server_state',
      channel: this.config.channel,
      endpoint: this.config.endpoint,
      ...pickState(state),
    });
    this.config.onChange();
  }

  private async receiveLoop(dealer: Dealer): Promise<void> {
    const { pending } = this.config;
    for (;;) {
      let message: Buffer[];
      try {
        message = await dealer.receive();
      } catch {
        return; // closed
      }
      if (!hasFrames(message, 1, this.protocolError)) continue;
      const decoded = decodeFrame(message[0] as Buffer);
      for (const bad of decoded.malformed) {
        this.protocolError(bad.reason);
      }
      for (const record of decoded.records) {
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
          default:
            // A server never starts a business call toward a client (03 §1): it reaches no handler.
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
    this.protocolError(`reply matches no pending request (correlation ${correlation})`);
  }
}

function newDealer(endpoint: string): Dealer {
  // linger 0 and immediate: records are queued only to a completed connection, so they never wait
  // in zeromq for a server that is not there, to be delivered later to whoever comes back.
  return new Dealer({
    linger: 0,
    immediate: true,
    ipv6: endpoint.includes('['),
    // A zeromq message may carry up to 512 records, so the default HWM (1000 messages) would let
    // half a million records wait inside zeromq: keep that backlog near the source-local queue's size.
    sendHighWaterMark: SEND_HWM_MESSAGES,
    heartbeatInterval: HEARTBEAT_INTERVAL_MS,
    heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  });
}

function pickState(s: ServerState) {
  return { serverRid: s.serverRid, generation: s.generation, weight: s.weight, draining: s.draining };
}
