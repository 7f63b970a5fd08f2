import { ZLinkError } from '../../core/errors.js';
import { encodeRequest, encodeSend } from '../../core/wire/index.js';
import type { CallMetrics, ZLinkEvents } from '../../core/observe/index.js';
import {
  type PendingRequests,
  type SelectorCandidate,
  TargetSelector,
  RESOLVED,
} from '../../core/calls/index.js';
import { CANDIDATE_WAIT_CAP_MS } from '../../core/options/index.js';
import {
  type SelectionSource,
  type Submission,
  WakeList,
  admitThen,
  reportSelection,
} from '../outbound/index.js';
import type { ServerConnection } from './server-connection.js';

/** What the calls of one channel need from the channel that keeps its connections. */
export interface ClientCallsHost {
  readonly channel: string;
  readonly clientId: string;
  readonly pending: PendingRequests;
  readonly events: ZLinkEvents;
  /** Whether some server endpoint has not completed its handshake (yet): a call may still wait for it. */
  anyConnecting(): boolean;
}

/**
 * The calls of one ClientServer channel: select-one over the candidates the channel hands in
 * (`update`), send admission on the chosen connection, and the short wait for a server whose
 * admission is under way. A call only picks: the candidate list changes only at `update`.
 */
export class ClientCalls {
  private readonly selector = new TargetSelector<ServerConnection>();
  /** Ready servers left out of the candidates (weight 0 or draining). */
  private excludedReady = 0;
  private readonly waiters = new WakeList();
  private closed = false;
  private readonly metrics: CallMetrics;
  private readonly selection: SelectionSource;

  constructor(private readonly host: ClientCallsHost) {
    const { events, channel, clientId } = host;
    this.metrics = events.metrics.scope('client-server', channel, undefined).calls;
    this.selection = { events, route: 'client-server', channel, mesh: undefined, sourceRid: clientId };
  }

  get candidateCount(): number {
    return this.selector.size;
  }

  /**
   * Swaps in a new candidate list (`excluded`: ready servers left out of it); wakes the calls that
   * wait when a candidate appeared or every server turned out excluded.
   */
  update(candidates: SelectorCandidate<ServerConnection>[], excluded: number): void {
    this.excludedReady = excluded;
    this.selector.update(candidates);
    if (this.selector.size > 0 || excluded > 0) this.waiters.wakeAll();
  }

  /** From now on a call ends `Shutdown`; calls waiting for a candidate wake up to end so. */
  close(): void {
    this.closed = true;
    this.waiters.wakeAll();
  }

  /** One-way send: resolves when the chosen connection's queue accepted the record. */
  send(call: Submission): Promise<void> {
    const connection = this.selector.pick();
    // Fast path: a candidate with queue space takes the record in this very turn.
    if (connection !== undefined && this.canQueueNow(connection, call)) {
      connection.pump.offer(encodeSend(call.packet, call.metadata, call.payload, call.trace));
      this.metrics.sends++;
      if (this.host.events.perMessage) this.selected('send', connection, 'immediate');
      return RESOLVED;
    }
    return this.sendSlow(call, connection);
  }

  /** Request: resolves with the reply; every path ends once (see `PendingRequests`). */
  request(call: Submission, describe: string): Promise<unknown> {
    const connection = this.selector.pick();
    if (connection !== undefined && this.canQueueNow(connection, call)) {
      if (this.host.events.perMessage) this.selected('request', connection, 'immediate');
      return this.submitRequest(connection, call, describe, call.timeoutMs);
    }
    return this.requestSlow(call, describe, connection);
  }

  /**
   * Resolves once at least `count` candidates are selectable; `Timeout` past `timeoutMs`. Woken by updates,
   * no polling.
   */
  async waitForCandidates(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.selector.size < count) {
      const left = deadline - Date.now();
      if (left <= 0 || this.closed) {
        throw new ZLinkError(
          'Timeout',
          `'${this.host.channel}' did not reach ${count} candidate(s) in ${timeoutMs} ms`,
        );
      }
      await this.waitForCandidate(left, undefined);
    }
  }

  private async sendSlow(call: Submission, picked: ServerConnection | undefined): Promise<void> {
    const deadline = Date.now() + call.timeoutMs;
    let connection = picked;
    try {
      const chosen = (connection ??= await this.choose(call, deadline));
      await this.admission(chosen, call, deadline, () =>
        chosen.pump.offer(encodeSend(call.packet, call.metadata, call.payload, call.trace)),
      );
    } catch (error) {
      this.metrics.refuse(error);
      if (this.host.events.perMessage) this.selected('send', connection, 'refused', error);
      throw error;
    }
    this.metrics.sends++;
    if (this.host.events.perMessage) this.selected('send', connection, 'after_wait');
  }

  private async requestSlow(
    call: Submission,
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
      if (this.host.events.perMessage) this.selected('request', connection, 'refused', error);
      throw error;
    }
    if (this.host.events.perMessage) this.selected('request', connection, 'after_wait');
    return result;
  }

  private selected(
    kind: 'send' | 'request',
    connection: ServerConnection | undefined,
    admission: 'immediate' | 'after_wait' | 'refused',
    error?: unknown,
  ): void {
    const target = connection?.state?.serverRid;
    reportSelection(this.selection, kind, this.host.channel, target, admission, error);
  }

  /** Opens the pending entry and queues the record, in the turn admission allowed it. */
  private submitRequest(
    connection: ServerConnection,
    call: Submission,
    describe: string,
    timeoutMs: number,
  ): Promise<unknown> {
    const { correlation, result } = this.host.pending.open({
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
  private canQueueNow(connection: ServerConnection, call: Submission): boolean {
    return !this.closed && !call.signal?.aborted && connection.ready && connection.pump.hasSpace;
  }

  /** Send admission on `connection` (see `admitThen`): `submit` runs in the turn that may queue. */
  private admission<T>(
    connection: ServerConnection,
    call: Submission,
    deadline: number,
    submit: () => T,
  ): Promise<T> {
    const { channel } = this.host;
    const blocked = (): ZLinkError | undefined => {
      if (this.closed) return new ZLinkError('Shutdown', `call on '${channel}': the client is closing`);
      if (connection.ready) return undefined;
      const lost = `connection to ${connection.endpoint} for '${channel}' was lost before submit`;
      return new ZLinkError('RouteError', lost);
    };
    return admitThen(connection.pump, call, deadline, `call on '${channel}'`, blocked, submit);
  }

  private async choose(call: Submission, deadline: number): Promise<ServerConnection> {
    let connection = this.selector.pick();
    if (connection) return connection;
    // Slow path only (no candidate): the hot path above never scans connections.
    const { channel } = this.host;
    // Closed: the candidates were cleared with the connections, so no wait could end otherwise.
    if (this.closed) throw new ZLinkError('Shutdown', `call on '${channel}': the client is closing`);
    const unavailable = () =>
      new ZLinkError('Unavailable', `every ready server of '${channel}' has weight 0 or is draining`);
    // Every known server is ready and excluded: nothing is under way that could change that soon.
    if (this.excludedReady > 0 && !this.host.anyConnecting()) throw unavailable();
    // A server whose admission is under way is waited for briefly
    // (docs/protocol.md#when-there-is-no-candidate): at most min(request timeout, 5 s); the wait
    // itself starts nothing. A ready but weight-0 or draining member does not cut the wait short
    // while another server is still connecting.
    const waitUntil = Math.min(deadline, Date.now() + CANDIDATE_WAIT_CAP_MS);
    while (!connection) {
      const left = waitUntil - Date.now();
      if (left <= 0)
        throw this.excludedReady > 0
          ? unavailable()
          : new ZLinkError('NotFound', `no ready server for '${channel}'`);
      await this.waitForCandidate(left, call.signal);
      if (this.closed) throw new ZLinkError('Shutdown', `call on '${channel}': the client is closing`);
      if (this.excludedReady > 0 && this.selector.size === 0 && !this.host.anyConnecting())
        throw unavailable();
      connection = this.selector.pick();
    }
    return connection;
  }

  private waitForCandidate(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return this.waiters.wait(ms, signal, `call on '${this.host.channel}'`);
  }
}
