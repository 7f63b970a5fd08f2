import { Buffer } from 'node:buffer';
import {
  type CallMetrics,
  type NormalizedEndpoint,
  type ClientConnectionSnapshot,
  type PendingRequests,
  type SelectorCandidate,
  type ServerDescriptor,
  type ServerState,
  type ZLinkEvents,
  CANDIDATE_WAIT_CAP_MS,
  TargetSelector,
  ZLinkError,
  encodeRequest,
  encodeSend,
  errorMessage,
  RESOLVED,
} from '../../core/index.js';
import type { ChannelCurve } from '../security/curve-keyring.js';
import { EndpointTrust } from '../security/endpoint-trust.js';
import { type Submission, admitThen } from '../admission.js';
import { type SelectionSource, reportSelection } from '../selection.js';
import { WakeList } from '../wake-list.js';
import { connectionSnapshot } from './connection-snapshot.js';
import { ServerConnection } from './server-connection.js';
import { ServerRuns } from './server-runs.js';
import { descriptorState, sameIdentity } from './server-descriptors.js';
import { VanishGrace, byEndpoint } from '../vanish-grace.js';

export interface ClientChannelConfig {
  readonly channel: string;
  readonly clientId: string;
  readonly pending: PendingRequests;
  readonly events: ZLinkEvents;
  readonly sendQueueLimit: number;
  /**
   * How long a ready connection whose descriptor vanished stays a candidate: its owner may be
   * writing it again after a store restart (the lease TTL bounds how long that can take).
   */
  readonly vanishGraceMs: number;
  /** How long a retiring connection waits for the replies of the requests it carries. */
  readonly retireWaitMs: number;
  /** CURVE on this channel's DEALERs (`security.curve`). @default plain ZMTP */
  readonly curve?: ChannelCurve;
  /** A refused handshake: the store may list another key by now (asks for a read). */
  readonly rediscover?: () => void;
}

/** A call as the runtime hands it to a channel (see `Submission`). */
export type ChannelSubmit = Submission;

/**
 * The Client role of one ClientServer channel: a DEALER per server endpoint and the selector over
 * the ready ones. Candidates (ready, weight > 0, not draining, one per Server RID) are rebuilt only
 * when a connection's state changes; a call only picks (02 §3). Selection and submit are one
 * step: the chosen server is never reported back, and a submitted call is never resent.
 */
export class ClientChannel {
  /** One connection intent per endpoint; manual and discovered sources of one endpoint share it. */
  private readonly connections = new Map<string, ServerConnection>();
  /** Manual endpoints (and the local server's) and the discovered runs by endpoint, with their keys (03 §3.2). */
  private readonly trust: EndpointTrust<ServerDescriptor>;
  /** Ready connections kept through the grace after their descriptor vanished. */
  private readonly vanishing: VanishGrace<ServerConnection>;
  private readonly retiring = new Set<Promise<void>>();
  /** Which run of each Server RID is current, and which were superseded (03 §7). */
  private readonly runs = new ServerRuns();
  private readonly selector = new TargetSelector<ServerConnection>();
  private excludedReady = 0;
  private readonly waiters = new WakeList();
  private closed = false;
  /** How many times the candidate list was rebuilt (a test proves calls never trigger one). */
  rebuilds = 0;

  private readonly metrics: CallMetrics;
  private readonly selection: SelectionSource;

  constructor(private readonly config: ClientChannelConfig) {
    this.vanishing = new VanishGrace(config.vanishGraceMs);
    const { events, channel, clientId } = config;
    this.metrics = events.metrics.scope('client-server', channel, undefined).calls;
    this.selection = { events, route: 'client-server', channel, mesh: undefined, sourceRid: clientId };
    this.trust = new EndpointTrust(config.curve, 'server', (detail, endpoint) =>
      events.emit({ type: 'protocol_error', route: 'client-server', channel, endpoint, reason: detail }),
    );
  }

  /** Adds a manual server endpoint (idempotent: one DEALER per endpoint; the first entry's `rid` and key hold). */
  connect(entry: NormalizedEndpoint): void {
    const { endpoint } = entry;
    const { manual } = this.trust;
    if (!manual.has(endpoint)) manual.set(endpoint, entry);
    const existing = this.connections.get(endpoint);
    if (existing) existing.recheck(undefined);
    else this.open(endpoint);
  }

  /**
   * The discovered Servers of this channel, from one full read (03 §3.2, §7, §8): a new endpoint
   * gets a connection, which is ready only once the server confirms a listed (RID, generation); a
   * larger descriptor revision applies like a State record; a connection whose descriptor is gone
   * retires — at once when it is not ready or a newer generation of its RID is ready, otherwise after
   * `vanishGraceMs` (its owner may be writing it again after a store restart). Never called during a
   * store outage, so an outage opens and closes nothing.
   */
  setDiscovered(descriptors: readonly ServerDescriptor[]): void {
    if (this.closed) return;
    const listed = byEndpoint(
      descriptors,
      (d) =>
        d.channel === this.config.channel &&
        !this.runs.isSuperseded(d.rid, d.generation) &&
        this.trust.speaksOurs(d),
    );
    this.trust.listed = listed;
    for (const [endpoint, list] of listed) {
      const connection = this.connections.get(endpoint);
      if (!connection) {
        // A recheck earlier in this loop may have superseded the run listed here.
        if (list.some((d) => !this.runs.isSuperseded(d.rid, d.generation))) this.open(endpoint);
        continue;
      }
      this.vanishing.listed(connection);
      const confirmed = connection.state;
      const match = confirmed && list.find((d) => sameIdentity(d, confirmed));
      connection.recheck(match ? descriptorState(match) : undefined);
    }
    const now = Date.now();
    for (const [endpoint, connection] of this.connections) {
      if (this.trust.manual.has(endpoint) || listed.has(endpoint)) continue;
      if (this.vanishing.mustGo(connection, connection.ready, now)) this.retire(connection);
    }
  }

  private retire(connection: ServerConnection): void {
    this.connections.delete(connection.endpoint);
    this.vanishing.forget(connection);
    const done = connection.retire(this.config.retireWaitMs).finally(() => this.retiring.delete(done));
    this.retiring.add(done);
  }

  /** Whether a connection at `endpoint` (made to `key`) may become ready with `state` (see `ServerConnectionConfig.accepts`). */
  private accepts(
    endpoint: string,
    state: ServerState,
    previous: ServerState | undefined,
    key: string | undefined,
  ): boolean {
    // A superseded run is not admitted even behind a manual endpoint (it is simply not selected).
    if (this.runs.isSuperseded(state.serverRid, state.generation)) return false;
    const run = { rid: state.serverRid, generation: state.generation };
    // Kept through the grace after its descriptor vanished: only the identity it had confirmed.
    const kept = previous?.serverRid === state.serverRid && previous.generation === state.generation;
    return this.trust.accepts(endpoint, run, key) ?? kept;
  }

  private open(endpoint: string): void {
    const connection = new ServerConnection({
      channel: this.config.channel,
      endpoint,
      clientId: this.config.clientId,
      pending: this.config.pending,
      events: this.config.events,
      sendQueueLimit: this.config.sendQueueLimit,
      onChange: () => this.rebuild(),
      accepts: (state, previous, key) => this.accepts(endpoint, state, previous, key),
      curve: this.config.curve,
      connectKey: (previous, refused) => this.trust.connectKey(endpoint, previous, refused),
      rediscover: this.config.rediscover,
    });
    this.connections.set(endpoint, connection);
    try {
      connection.start();
    } catch (error) {
      // zeromq refused the endpoint or had no socket to give (EMFILE): no intent, and the next
      // read tries again.
      this.connections.delete(endpoint);
      void connection.close();
      this.config.events.emit({
        type: 'protocol_error',
        route: 'client-server',
        channel: this.config.channel,
        endpoint,
        reason: `cannot connect: ${errorMessage(error)}`,
      });
    }
  }

  get candidateCount(): number {
    return this.selector.size;
  }

  snapshot(): ClientConnectionSnapshot[] {
    return [...this.connections.values()].map((c) =>
      connectionSnapshot(c, this.trust.manual.has(c.endpoint)),
    );
  }

  /** One-way send: resolves when the chosen connection's queue accepted the record. */
  send(call: ChannelSubmit): Promise<void> {
    const connection = this.selector.pick();
    // Fast path: a candidate with queue space takes the record in this very turn.
    if (connection !== undefined && this.canQueueNow(connection, call)) {
      connection.pump.offer(encodeSend(call.packet, call.metadata, call.payload, call.trace));
      this.metrics.sends++;
      if (this.config.events.perMessage) this.selected('send', connection, 'immediate');
      return RESOLVED;
    }
    return this.sendSlow(call, connection);
  }

  /** Request: resolves with the reply; every path ends once (see `PendingRequests`). */
  request(call: ChannelSubmit, describe: string): Promise<unknown> {
    const connection = this.selector.pick();
    if (connection !== undefined && this.canQueueNow(connection, call)) {
      if (this.config.events.perMessage) this.selected('request', connection, 'immediate');
      return this.submitRequest(connection, call, describe, call.timeoutMs);
    }
    return this.requestSlow(call, describe, connection);
  }

  private async sendSlow(call: ChannelSubmit, picked: ServerConnection | undefined): Promise<void> {
    const deadline = Date.now() + call.timeoutMs;
    let connection = picked;
    try {
      const chosen = (connection ??= await this.choose(call, deadline));
      await this.admission(chosen, call, deadline, () =>
        chosen.pump.offer(encodeSend(call.packet, call.metadata, call.payload, call.trace)),
      );
    } catch (error) {
      this.metrics.refuse(error);
      if (this.config.events.perMessage) this.selected('send', connection, 'refused', error);
      throw error;
    }
    this.metrics.sends++;
    if (this.config.events.perMessage) this.selected('send', connection, 'after_wait');
  }

  private async requestSlow(
    call: ChannelSubmit,
    describe: string,
    picked: ServerConnection | undefined,
  ): Promise<unknown> {
    const deadline = Date.now() + call.timeoutMs;
    let connection = picked;
    let result: Promise<unknown>;
    try {
      const chosen = (connection ??= await this.choose(call, deadline));
      // Wrapped so that admission resolves once the request is queued, not when its reply comes.
      const queued = await this.admission(chosen, call, deadline, () => ({
        reply: this.submitRequest(chosen, call, describe, Math.max(1, deadline - Date.now())),
      }));
      result = queued.reply;
    } catch (error) {
      this.metrics.refuse(error);
      if (this.config.events.perMessage) this.selected('request', connection, 'refused', error);
      throw error;
    }
    if (this.config.events.perMessage) this.selected('request', connection, 'after_wait');
    return result;
  }

  private selected(
    kind: 'send' | 'request',
    connection: ServerConnection | undefined,
    admission: 'immediate' | 'after_wait' | 'refused',
    error?: unknown,
  ): void {
    const target = connection?.state?.serverRid;
    reportSelection(this.selection, kind, this.config.channel, target, admission, error);
  }

  /** Opens the pending entry and queues the record, in the turn admission allowed it. */
  private submitRequest(
    connection: ServerConnection,
    call: ChannelSubmit,
    describe: string,
    timeoutMs: number,
  ): Promise<unknown> {
    const { correlation, result } = this.config.pending.open({
      timeoutMs,
      signal: call.signal,
      route: connection,
      describe,
      metrics: this.metrics,
    });
    this.metrics.requests++;
    connection.pump.offer(encodeRequest(correlation, call.packet, call.metadata, call.payload, call.trace));
    return result;
  }

  /** The fast path: the chosen connection takes the record in the caller's own turn. */
  private canQueueNow(connection: ServerConnection, call: ChannelSubmit): boolean {
    return !this.closed && !call.signal?.aborted && connection.ready && connection.pump.hasSpace;
  }

  /** Send admission on `connection` (see `admitThen`): `submit` runs in the turn that may queue. */
  private admission<T>(
    connection: ServerConnection,
    call: ChannelSubmit,
    deadline: number,
    submit: () => T,
  ): Promise<T> {
    const { channel } = this.config;
    const blocked = (): ZLinkError | undefined => {
      if (this.closed) return new ZLinkError('Shutdown', `call on '${channel}': the client is closing`);
      if (connection.ready) return undefined;
      const lost = `connection to ${connection.endpoint} for '${channel}' was lost before submit`;
      return new ZLinkError('RouteError', lost);
    };
    return admitThen(connection.pump, call, deadline, `call on '${channel}'`, blocked, submit);
  }

  async close(): Promise<void> {
    // Calls waiting for a candidate wake up and end `Shutdown` (see `choose`).
    this.closed = true;
    this.waiters.wakeAll();
    await Promise.all([...this.connections.values()].map((c) => c.close()));
    await Promise.all([...this.retiring]);
    this.connections.clear();
    this.selector.update([]);
  }

  private async choose(call: ChannelSubmit, deadline: number): Promise<ServerConnection> {
    let connection = this.selector.pick();
    if (connection) return connection;
    // Slow path only (no candidate): the hot path above never scans connections.
    const { channel } = this.config;
    const unavailable = () =>
      new ZLinkError('Unavailable', `every ready server of '${channel}' has weight 0 or is draining`);
    // Every known server is ready and excluded: nothing is under way that could change that soon.
    if (this.excludedReady > 0 && !this.anyConnecting()) throw unavailable();
    // ClientServer waits briefly for a server whose admission is under way (02 §3): at most
    // min(request timeout, 5 s); the wait itself starts nothing. A ready but weight-0 or draining
    // member does not cut the wait short while another server is still connecting.
    const waitUntil = Math.min(deadline, Date.now() + CANDIDATE_WAIT_CAP_MS);
    while (!connection) {
      const left = waitUntil - Date.now();
      if (left <= 0)
        throw this.excludedReady > 0
          ? unavailable()
          : new ZLinkError('NotFound', `no ready server for '${channel}'`);
      await this.waitForCandidate(left, call.signal);
      if (this.closed) throw new ZLinkError('Shutdown', `call on '${channel}': the client is closing`);
      if (this.excludedReady > 0 && this.selector.size === 0 && !this.anyConnecting()) throw unavailable();
      connection = this.selector.pick();
    }
    return connection;
  }

  /** Whether some server endpoint has not completed its handshake (yet). */
  private anyConnecting(): boolean {
    for (const connection of this.connections.values()) if (connection.connecting) return true;
    return false;
  }

  /** Resolves once at least `count` candidates are selectable; `Timeout` past `timeoutMs`. Woken by rebuilds, no polling. */
  async waitForCandidates(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.selector.size < count) {
      const left = deadline - Date.now();
      if (left <= 0 || this.closed) {
        throw new ZLinkError(
          'Timeout',
          `'${this.config.channel}' did not reach ${count} candidate(s) in ${timeoutMs} ms`,
        );
      }
      await this.waitForCandidate(left, undefined);
    }
  }

  private waitForCandidate(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return this.waiters.wait(ms, signal, `call on '${this.config.channel}'`);
  }

  /** Runs on connection state changes only; swaps in a new candidate list. */
  private rebuild(): void {
    this.rebuilds++;
    const { current, losers, released } = this.runs.choose(this.connections.values());
    const candidates: SelectorCandidate<ServerConnection>[] = [];
    let excluded = 0;
    for (const [rid, connection] of current) {
      const state = connection.state as ServerState;
      if (state.weight === 0 || state.draining) excluded++;
      else candidates.push({ id: Buffer.from(rid, 'utf8'), weight: state.weight, target: connection });
    }
    this.excludedReady = excluded;
    this.selector.update(candidates);
    if (this.selector.size > 0 || excluded > 0) this.waiters.wakeAll();
    // 03 §7 step 4: the previous generation's connection goes once the new one is a ready target
    // (a manual endpoint stays: it is configuration, and simply is not selected).
    for (const old of losers) {
      if (this.trust.manual.has(old.endpoint)) old.recheck(undefined);
      else this.retire(old);
    }
    // A superseded run may come back (no run of its RID is current any more): ask again.
    if (released) for (const c of [...this.connections.values()]) if (c.isUnconfirmed) c.recheck(undefined);
  }
}
