import { Buffer } from 'node:buffer';
import type { Router } from 'zeromq';
import { REMOTE_CODES } from '../../core/errors.js';
import {
  type ServerState,
  type TracePropagation,
  RecordKind,
  decodeFrame,
  encodePing,
  encodeServerState,
} from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import {
  type ChannelHandlerRegistry,
  type JobQueue,
  type ZLinkMessageContext,
  RESOLVED,
} from '../../core/calls/index.js';
import type { NormalizedListen } from '../../core/options/index.js';
import { InboundGate, type InboundScope, channelScope, failInbound } from '../inbound/index.js';
import { ListenAddress, SocketPump, hasFrames, listenerRouter } from '../io/index.js';
import { SilenceClock, heardBy } from '../liveness/index.js';
import { type ChannelCurve, acceptedRefusals, watchHandshakes } from '../security/index.js';
import { CLIENT_GONE_MS, PING_INTERVAL_MS } from '../timing.js';

export interface ServerListenerConfig {
  readonly channel: string;
  readonly rid: string;
  readonly generation: string;
  readonly listen: NormalizedListen;
  readonly weight: number;
  readonly handlers: ChannelHandlerRegistry;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
  /** Every change of the published state (weight, drain): the Location Store descriptor follows it. */
  readonly onStateChange?: (state: ServerState) => void;
  /** Drain step 4 (docs/protocol.md#drain): releases the descriptor and lease, before the listener closes. */
  readonly release?: () => Promise<void>;
  /** Trace propagation (OpenTelemetry loaded by the runtime): traced handlers run in their context. */
  readonly tracing?: TracePropagation;
  /** CURVE: the listener is a CURVE server and admits the keys its ZAP check knows. @default plain ZMTP */
  readonly curve?: ChannelCurve;
}

/** Remembered client routing ids, for broadcasting state changes and pings; bounded against client churn. */
const MAX_KNOWN_CLIENTS = 10000;

/** A client that said hello: its routing id, and when it was last heard from (its hello or a ping). */
interface KnownClient {
  readonly id: Buffer;
  heard: number;
}

/**
 * The Server role of one ClientServer channel: one ROUTER listener. It answers a client's hello
 * with its identity (ChannelName, Server RID, lifecycle generation, weight, drain state, revision),
 * runs handlers for sends and requests under the process job queue, and replies through the
 * reply correlation. It never starts a business call toward a client (docs/protocol.md#clientserver-roles).
 */
export class ServerListener {
  private readonly router: Router;
  private readonly address: ListenAddress;
  private readonly pump: SocketPump;
  private readonly clients = new Map<string, KnownClient>();
  /** Pings every known client each second (see `ServerConnection`: a client judges its server by them). */
  private pingTimer: NodeJS.Timeout | undefined;
  private readonly silence = new SilenceClock();
  private state: ServerState;
  private drainRequested = false;
  private loop: Promise<void> | undefined;
  private closed = false;
  /** Aborts on `close()`, so a receive loop waiting for a job permit lets go. */
  private readonly closing = new AbortController();
  private readonly scope: InboundScope<ZLinkMessageContext>;
  /** Refuses business records while draining or fenced; runs the others under job permits. */
  private readonly gate: InboundGate;
  /** With CURVE: stops answering ZAP for this listener, and its connection-event watch. */
  private unzap: (() => Promise<void>) | undefined;
  private watching: Promise<void> | undefined;

  constructor(private readonly config: ServerListenerConfig) {
    this.state = {
      channel: config.channel,
      serverRid: config.rid,
      generation: config.generation,
      weight: config.weight,
      draining: false,
      revision: 1,
    };
    this.router = listenerRouter(config.listen.bindHost.includes(':'), config.curve?.socket);
    this.address = new ListenAddress(config.listen);
    this.pump = new SocketPump(this.router, Number.MAX_SAFE_INTEGER, `server ${config.channel}`);
    const { channel, handlers, events } = config;
    this.scope = {
      ...channelScope('client-server', events, channel, undefined, handlers, (id, record) =>
        this.reply(id, record),
      ),
      tracing: config.tracing,
    };
    this.gate = new InboundGate({
      jobs: config.jobs,
      refusals: { who: `server of '${channel}'`, drainNamesChannel: false, precedence: 'draining' },
      // One socket per channel with nothing else on it: the loop waits for each permit itself.
      backlog: 0,
      recheck: true,
      signal: this.closing.signal,
    });
  }

  /** Binds (port 0 picks a free port), starts reading, and admits business messages. */
  async bind(): Promise<void> {
    const { curve } = this.config;
    if (curve !== undefined) {
      // Before the bind: libzmq refuses every connection while no ZAP handler answers for the domain.
      this.unzap = await curve.serve();
      this.watching = watchHandshakes(
        this.router,
        acceptedRefusals(curve, 'this server', 'a client'),
        () => this.closed,
      );
    }
    await this.address.bind(this.router);
    this.loop = this.receiveLoop();
    this.silence.reset(Date.now());
    this.pingTimer = setInterval(this.pingClients, PING_INTERVAL_MS);
    this.config.events.emit({ type: 'listening', channel: this.config.channel, endpoint: this.endpoint });
  }

  /** The endpoint clients elsewhere use. */
  get endpoint(): string {
    return this.address.endpoint;
  }

  /** The endpoint a client in this process uses to reach this server over the real transport. */
  get localEndpoint(): string {
    return this.address.local;
  }

  get serverState(): ServerState {
    return this.state;
  }

  get activeHandlers(): number {
    return this.gate.inFlight;
  }

  /**
   * Follows the owner lease: fenced refuses new business records (finite `Rejected`) and tells
   * clients it is out of selection (draining, with a larger revision); held admits again.
   */
  setFenced(fenced: boolean): void {
    if (this.gate.fenced === fenced || this.closed) return;
    this.gate.fenced = fenced;
    this.publish({
      ...this.state,
      draining: this.drainRequested || fenced,
      revision: this.state.revision + 1,
    });
  }

  /** Runtime weight change: a larger revision reaches every known client as a control record. */
  setWeight(weight: number): void {
    this.publish({ ...this.state, weight, revision: this.state.revision + 1 });
  }

  /**
   * docs/protocol.md#drain: stop admitting, publish draining with a larger revision, let accepted handlers
   * finish (up to the deadline), then close the listener. Requests arriving meanwhile end `Rejected`.
   */
  async drain(deadlineMs: number): Promise<'completed' | 'deadline'> {
    if (this.closed || this.drainRequested) return 'completed';
    this.drainRequested = true;
    this.publish({ ...this.state, draining: true, revision: this.state.revision + 1 });
    this.config.events.emit({ type: 'drain', channel: this.config.channel, phase: 'started' });
    const phase = await this.gate.drain(
      deadlineMs,
      () => this.closed,
      () => this.pump.queued > 0,
    );
    this.config.events.emit({ type: 'drain', channel: this.config.channel, phase });
    // Give zeromq a moment to put the last replies on the wire before the socket goes. A close()
    // that ran meanwhile (application shutdown during a drain) already took the socket.
    if (!this.router.closed) this.router.linger = 1000;
    await this.config.release?.();
    await this.close();
    return phase;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.closing.abort();
    // Records still on their way are refused as a drain refuses them.
    this.gate.draining = true;
    this.pump.close();
    if (!this.router.closed) this.router.close();
    await this.loop;
    await this.watching;
    await this.unzap?.();
  }

  private publish(next: ServerState): void {
    // A closed listener's descriptor is released: nothing it says may bring it back.
    if (this.closed) return;
    this.state = next;
    const record = encodeServerState(RecordKind.State, next);
    for (const client of this.clients.values()) this.pump.force(record, client.id);
    this.config.onStateChange?.(next);
  }

  private async receiveLoop(): Promise<void> {
    const { gate } = this;
    for (;;) {
      let message: Buffer[];
      // This frame's replies go to zeromq before the next receive is asked for (see `writePending`).
      if (this.pump.writePending) await RESOLVED;
      try {
        message = await this.router.receive();
      } catch {
        return; // closed
      }
      if (!hasFrames(message, 2, this.protocolError)) continue;
      const id = message[0] as Buffer;
      const decoded = decodeFrame(message[1] as Buffer);
      for (const bad of decoded.malformed) {
        if (bad.correlation !== undefined) {
          failInbound(this.scope, id, bad.correlation, { packet: '' }, 'decode_error', {
            code: REMOTE_CODES.decodeError,
            message: bad.reason,
          });
        } else {
          this.protocolError(bad.reason);
        }
      }
      // Indexed: an iterator kept across the await below would allocate a result object per record.
      const { records } = decoded;
      for (let i = 0; i < records.length; i++) {
        const record = records[i]!;
        switch (record.kind) {
          case RecordKind.Hello:
            this.hello(id, record.channel);
            break;
          case RecordKind.Ping:
            this.heard(id);
            break;
          case RecordKind.Request:
          case RecordKind.Send:
            gate.deliver(
              this.scope,
              id,
              record.kind === RecordKind.Request ? record.correlation : undefined,
              record,
              true,
            );
            // A full job queue stops this loop from reading: zeromq's HWM then pushes back on clients.
            if (gate.behind) {
              await this.silence.unread.during(gate.caughtUp());
              if (this.closed) return;
            }
            break;
          default:
            this.protocolError(`a server does not accept record kind ${record.kind}`);
        }
      }
    }
  }

  /** A record this listener cannot use (unreadable, of a kind a server never takes): reported, dropped. */
  private readonly protocolError = (reason: string): void => {
    this.config.events.emit({
      type: 'protocol_error',
      route: 'client-server',
      channel: this.config.channel,
      reason,
    });
  };

  private hello(id: Buffer, channel: string): void {
    if (channel !== this.config.channel) {
      this.protocolError(`hello for channel '${channel}' reached the listener of '${this.config.channel}'`);
      // Say who is here anyway: the client's handshake check records the mismatch and never makes
      // this listener a candidate; it is not remembered as a client of this channel.
      this.pump.force(encodeServerState(RecordKind.Welcome, this.state), id);
      return;
    }
    const key = id.toString('latin1');
    if (!this.heard(id, key)) {
      if (this.clients.size >= MAX_KNOWN_CLIENTS)
        this.clients.delete(this.clients.keys().next().value as string);
      this.clients.set(key, { id: Buffer.from(id), heard: Date.now() });
    }
    this.pump.force(encodeServerState(RecordKind.Welcome, this.state), id);
  }

  /**
   * A known client was heard from: it moves to the back (least recently heard from is forgotten
   * first). A ping from a client that never said hello here is ignored. Whether it was known.
   */
  private heard(id: Buffer, key = id.toString('latin1')): boolean {
    const known = this.clients.get(key);
    if (!known) return false;
    this.clients.delete(key);
    known.heard = Date.now();
    this.clients.set(key, known);
    return true;
  }

  /** Each second: a ping to every client heard from lately; one silent past `CLIENT_GONE_MS` is forgotten. */
  private readonly pingClients = (): void => {
    const now = Date.now();
    const credit = this.silence.credit(now);
    const ping = encodePing();
    for (const [key, client] of this.clients) {
      client.heard = heardBy(client.heard, credit, now);
      if (now - client.heard > CLIENT_GONE_MS) this.clients.delete(key);
      else this.pump.force(ping, client.id);
    }
  };

  /** Replies take no job permit and are never refused by the queue bound (they are bounded by permits). */
  private reply(id: Buffer, record: Uint8Array): void {
    this.pump.force(record, id);
  }
}
