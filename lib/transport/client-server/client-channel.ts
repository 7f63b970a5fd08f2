import {
  type PendingRequests,
  type SelectorCandidate,
  type ZLinkEvents,
  CANDIDATE_WAIT_CAP_MS,
  TargetSelector,
  ZLinkError,
  encodeRequest,
  encodeSend,
} from '../../core/index.js';
import { type Submission, admitThen } from '../admission.js';
import { WakeList } from '../wake-list.js';
import { ServerConnection } from './server-connection.js';

export interface ClientChannelConfig {
  readonly channel: string;
  readonly clientId: string;
  readonly pending: PendingRequests;
  readonly events: ZLinkEvents;
  readonly sendQueueLimit: number;
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
  private readonly connections = new Map<string, ServerConnection>();
  private readonly selector = new TargetSelector<ServerConnection>();
  private excludedReady = 0;
  private readonly waiters = new WakeList();
  private closed = false;
  /** How many times the candidate list was rebuilt (a test proves calls never trigger one). */
  rebuilds = 0;

  constructor(private readonly config: ClientChannelConfig) {}

  /** Adds a server endpoint (idempotent: one DEALER per endpoint). */
  connect(endpoint: string): void {
    if (this.connections.has(endpoint)) return;
    const connection = new ServerConnection({
      channel: this.config.channel,
      endpoint,
      clientId: this.config.clientId,
      pending: this.config.pending,
      events: this.config.events,
      sendQueueLimit: this.config.sendQueueLimit,
      onChange: () => this.rebuild(),
    });
    this.connections.set(endpoint, connection);
    connection.start();
  }

  get candidateCount(): number {
    return this.selector.size;
  }

  snapshot() {
    return [...this.connections.values()].map((c) => ({
      endpoint: c.endpoint,
      ready: c.ready,
      serverRid: c.state?.serverRid,
      generation: c.state?.generation,
      weight: c.state?.weight,
      draining: c.state?.draining,
      revision: c.state?.revision,
      queued: c.pump.queued,
    }));
  }

  /** One-way send: resolves when the chosen connection's queue accepted the record. */
  send(call: ChannelSubmit): Promise<void> {
    const connection = this.selector.pick();
    // Fast path: a candidate with queue space takes the record in this very turn.
    if (connection !== undefined && this.canQueueNow(connection, call)) {
      connection.pump.offer(encodeSend(call.packet, call.metadata, call.payload));
      return Promise.resolve();
    }
    return this.sendSlow(call, connection);
  }

  /** Request: resolves with the reply; every path ends once (see `PendingRequests`). */
  request(call: ChannelSubmit, describe: string): Promise<unknown> {
    const connection = this.selector.pick();
    if (connection !== undefined && this.canQueueNow(connection, call)) {
      return this.submitRequest(connection, call, describe, call.timeoutMs);
    }
    return this.requestSlow(call, describe, connection);
  }

  private async sendSlow(call: ChannelSubmit, picked: ServerConnection | undefined): Promise<void> {
    const deadline = Date.now() + call.timeoutMs;
    const connection = picked ?? (await this.choose(call, deadline));
    await this.admission(connection, call, deadline, () =>
      connection.pump.offer(encodeSend(call.packet, call.metadata, call.payload)),
    );
  }

  private async requestSlow(
    call: ChannelSubmit,
    describe: string,
    picked: ServerConnection | undefined,
  ): Promise<unknown> {
    const deadline = Date.now() + call.timeoutMs;
    const connection = picked ?? (await this.choose(call, deadline));
    return this.admission(connection, call, deadline, () =>
      this.submitRequest(connection, call, describe, Math.max(1, deadline - Date.now())),
    );
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
    });
    connection.pump.offer(encodeRequest(correlation, call.packet, call.metadata, call.payload));
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
      return new ZLinkError(
        'RouteError',
        `connection to ${connection.endpoint} for '${channel}' was lost before submit`,
      );
    };
    return admitThen(connection.pump, call, deadline, `call on '${channel}'`, blocked, submit);
  }

  async close(): Promise<void> {
    // Calls waiting for a candidate wake up and end `Shutdown` (see `choose`).
    this.closed = true;
    this.waiters.wakeAll();
    await Promise.all([...this.connections.values()].map((c) => c.close()));
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
    const byRid = new Map<string, SelectorCandidate<ServerConnection>>();
    let excluded = 0;
    for (const connection of this.connections.values()) {
      const state = connection.state;
      if (!connection.ready || !state) continue;
      if (state.weight === 0 || state.draining) {
        excluded++;
        continue;
      }
      // The same Server RID reached through two endpoints (manual and local) is one candidate.
      if (!byRid.has(state.serverRid)) {
        byRid.set(state.serverRid, {
          id: Buffer.from(state.serverRid, 'utf8'),
          weight: state.weight,
          target: connection,
        });
      }
    }
    this.excludedReady = excluded;
    this.selector.update([...byRid.values()]);
    if (this.selector.size > 0 || excluded > 0) this.waiters.wakeAll();
  }
}
