import { Buffer } from 'node:buffer';
import { errorMessage } from '../../core/errors.js';
import type { ServerState } from '../../core/wire/index.js';
import type { ClientConnectionSnapshot, ZLinkEvents } from '../../core/observe/index.js';
import type { PendingRequests, SelectorCandidate } from '../../core/calls/index.js';
import type { ServerDescriptor } from '../../core/ports/index.js';
import type { NormalizedEndpoint } from '../../core/options/index.js';
import { type ChannelCurve, EndpointTrust } from '../security/index.js';
import type { Submission } from '../outbound/index.js';
import { connectionSnapshot } from './connection-snapshot.js';
import { ClientCalls } from './client-calls.js';
import { ServerConnection } from './server-connection.js';
import { ServerRuns } from './server-runs.js';
import { descriptorState, sameIdentity } from './server-state.js';
import { VanishGrace, byEndpoint } from '../liveness/index.js';

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
 * The Client role of one ClientServer channel: a DEALER per server endpoint and the selector over the ready
 * ones. Candidates (ready, weight > 0, not draining, one per Server RID) are rebuilt only when a connection's
 * state changes; a call only picks (docs/protocol.md#select-one). Selection and submit are one step: the
 * chosen server is never reported back, and a submitted call is never resent.
 */
export class ClientChannel {
  /** One connection intent per endpoint; manual and discovered sources of one endpoint share it. */
  private readonly connections = new Map<string, ServerConnection>();
  /**
   * Manual endpoints (and the local server's) and the discovered runs by endpoint, with their keys
   * (docs/operations.md#encryption-and-authentication-curve).
   */
  private readonly trust: EndpointTrust<ServerDescriptor>;
  /** Ready connections kept through the grace after their descriptor vanished. */
  private readonly vanishing: VanishGrace<ServerConnection>;
  private readonly retiring = new Set<Promise<void>>();
  /**
   * Which run of each Server RID is current, and which were superseded
   * (docs/protocol.md#lifecycle-generations).
   */
  private readonly runs = new ServerRuns();
  /** Select-one over the ready servers, and the calls' way to the chosen one. */
  private readonly calls: ClientCalls;
  private closed = false;
  /** How many times the candidate list was rebuilt (a test proves calls never trigger one). */
  rebuilds = 0;

  constructor(private readonly config: ClientChannelConfig) {
    this.vanishing = new VanishGrace(config.vanishGraceMs);
    const { events, channel } = config;
    this.calls = new ClientCalls({ ...config, anyConnecting: () => this.anyConnecting() });
    this.trust = new EndpointTrust(config.curve, 'server', (detail, endpoint) =>
      events.emit({ type: 'protocol_error', route: 'client-server', channel, endpoint, reason: detail }),
    );
  }

  /**
   * Adds a manual server endpoint (idempotent: one DEALER per endpoint; the first entry's `rid` and key
   * hold).
   */
  connect(entry: NormalizedEndpoint): void {
    const { endpoint } = entry;
    const { manual } = this.trust;
    if (!manual.has(endpoint)) manual.set(endpoint, entry);
    const existing = this.connections.get(endpoint);
    if (existing) existing.recheck(undefined);
    else this.open(endpoint);
  }

  /**
   * The discovered Servers of this channel, from one full read (docs/protocol.md#clientserver-handshake,
   * docs/protocol.md#lifecycle-generations, docs/protocol.md#location-store-outage): a new endpoint gets a
   * connection, which is ready only once the server confirms a listed (RID, generation); a larger descriptor
   * revision applies like a State record; a connection whose descriptor is gone retires — at once when it is
   * not ready or a newer generation of its RID is ready, otherwise after `vanishGraceMs` (its owner may be
   * writing it again after a store restart). Never called during a store outage, so an outage opens and
   * closes nothing.
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

  /**
   * Whether a connection at `endpoint` (made to `key`) may become ready with `state` (see
   * `ServerConnectionConfig.accepts`).
   */
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
    return this.calls.candidateCount;
  }

  snapshot(): ClientConnectionSnapshot[] {
    return [...this.connections.values()].map((c) =>
      connectionSnapshot(c, this.trust.manual.has(c.endpoint)),
    );
  }

  /** One-way send: resolves when the chosen connection's queue accepted the record (see `ClientCalls`). */
  send(call: ChannelSubmit): Promise<void> {
    return this.calls.send(call);
  }

  /** Request: resolves with the reply; every path ends once (see `PendingRequests`). */
  request(call: ChannelSubmit, describe: string): Promise<unknown> {
    return this.calls.request(call, describe);
  }

  async close(): Promise<void> {
    // Calls waiting for a candidate wake up and end `Shutdown`.
    this.closed = true;
    this.calls.close();
    await Promise.all([...this.connections.values()].map((c) => c.close()));
    await Promise.all([...this.retiring]);
    this.connections.clear();
    this.calls.update([], 0);
  }

  /** Whether some server endpoint has not completed its handshake (yet). */
  private anyConnecting(): boolean {
    for (const connection of this.connections.values()) if (connection.connecting) return true;
    return false;
  }

  /**
   * Resolves once at least `count` candidates are selectable; `Timeout` past `timeoutMs`. Woken by rebuilds,
   * no polling.
   */
  waitForCandidates(count: number, timeoutMs: number): Promise<void> {
    return this.calls.waitForCandidates(count, timeoutMs);
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
    this.calls.update(candidates, excluded);
    // docs/protocol.md#lifecycle-generations: the previous generation's connection goes once the new one is a
    // ready target (a manual endpoint stays: it is configuration, and simply is not selected).
    for (const old of losers) {
      if (this.trust.manual.has(old.endpoint)) old.recheck(undefined);
      else this.retire(old);
    }
    // A superseded run may come back (no run of its RID is current any more): ask again.
    if (released) for (const c of [...this.connections.values()]) if (c.isUnconfirmed) c.recheck(undefined);
  }
}
