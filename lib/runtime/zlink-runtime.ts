import { randomBytes } from 'node:crypto';
import { ZLinkError, configurationError, invalidArgument } from '../core/errors.js';
import type { TracePropagation } from '../core/wire/index.js';
import { type MetricsSnapshot, ZLinkEvents, toPrometheusText } from '../core/observe/index.js';
import {
  type ChannelHandlerRegistration,
  type FanoutHandlerRegistration,
  FanoutHandlerRegistry,
  type NodeHandlerRegistration,
  NodeHandlerRegistry,
  ChannelHandlerRegistry,
  JobQueue,
  PendingRequests,
} from '../core/calls/index.js';
import {
  type NormalizedOptions,
  type ZLinkOptions,
  CANDIDATE_WAIT_CAP_MS,
  isValidWeight,
  normalizeOptions,
  WEIGHT_MAX,
  WEIGHT_MIN,
} from '../core/options/index.js';
import type { ObjectClassRegistry, ObjectInstances } from '../core/objects/index.js';
import type { ObjectLayer } from '../spot/index.js';
import { type CallSubmission, type CallSubmitter, targetName } from './calls.js';
import { RuntimeClientServer } from './client-server.js';
import { checkHandlers, checkLateChannelHandler } from './handler-checks.js';
import { RuntimeLocation, type StoreCheck } from './location.js';
import { RuntimeMeshes } from './meshes.js';
import { RuntimeObjects } from './objects.js';
import { ZLinkObjects } from './zlink-objects.js';
import { toSubmission } from './submission.js';
import { RuntimeFanout } from './fanout.js';
import { RuntimeSessions } from './sessions.js';
import { submitToChannel } from './channel-call.js';
import { channelKeyring } from './channel-keyring.js';
import type { Topology } from './topology.js';
import { type PublishCall, ZLinkFanoutClient } from './fanout-client.js';
import { ZLinkSpotPublisher } from './spot-publisher.js';
import { ZLinkRouteClient } from './route-client.js';
import type { ZLinkSnapshot } from './snapshot.js';
import { loadTracePropagation } from './tracing.js';

export type RuntimeState = 'created' | 'starting' | 'started' | 'closing' | 'closed';

/**
 * Composes the topologies of validated options; usable without Nest.
 *
 * ```ts
 * const runtime = new ZLinkRuntime({ clientServer: { billing: { server: {}, client: {} } } });
 * runtime.registerChannelHandler({ channel: 'billing', kind: 'request', packet: 'charge', handler, source: 'charge' });
 * await runtime.start();
 * const reply = await runtime.routeClient.requestToChannel('billing', 'charge', { amount: 5 }).async();
 * await runtime.close();
 * ```
 */
export class ZLinkRuntime implements CallSubmitter {
  readonly options: NormalizedOptions;
  readonly events = new ZLinkEvents();
  readonly handlers = new ChannelHandlerRegistry();
  readonly nodeHandlers = new NodeHandlerRegistry();
  readonly fanoutHandlers = new FanoutHandlerRegistry();
  readonly fanoutClient: ZLinkFanoutClient;
  /** Logical Multicast to subscribed Spots from outside any object. */
  readonly spotPublisher: ZLinkSpotPublisher;
  readonly routeClient: ZLinkRouteClient;
  /** Creating, destroying and resolving Spots and Actors (on a runtime with an object mesh). */
  readonly objects: ZLinkObjects;
  /** The end-user session listeners (`sessions`): their handlers, hooks, endpoints and sessions. */
  readonly sessions: RuntimeSessions;
  /**
   * Random per process start: a restarted server is a new generation
   * (docs/protocol.md#lifecycle-generations).
   */
  readonly generation = randomBytes(8).toString('hex');
  private readonly pending = new PendingRequests();
  private readonly jobs: JobQueue;
  private readonly clientId = randomBytes(6).toString('hex');
  private readonly clientServer: RuntimeClientServer;
  private readonly meshes: RuntimeMeshes;
  /** A channel call's send paths (see `submitToChannel`), made once. */
  private readonly channelPaths: Parameters<typeof submitToChannel>[2];
  private readonly fanout: RuntimeFanout;
  private readonly objectLayer: RuntimeObjects;
  /** Walked in this order by every phase of `start()` and by `close()` (see `Topology`). */
  private readonly topologies: readonly Topology[];
  /** The Location Store, its owner lease and discovery; set on start when `locationStore` is given. */
  private location: RuntimeLocation | undefined;
  private state: RuntimeState = 'created';
  private started: Promise<void> | undefined;
  /** Trace propagation, when `@opentelemetry/api` loaded at start (see tracing.ts). */
  private tracing: TracePropagation | undefined;

  /** Validates the options; throws `Configuration` naming the field. */
  constructor(options?: ZLinkOptions) {
    this.options = normalizeOptions(options);
    this.jobs = new JobQueue(this.options.handlerConcurrency);
    this.routeClient = new ZLinkRouteClient(this);
    this.fanoutClient = new ZLinkFanoutClient(this);
    // What ClientServer and fanout share (the CURVE keyring: their listeners admit the same keys).
    const channels = {
      options: this.options,
      generation: this.generation,
      processTag: this.clientId,
      jobs: this.jobs,
      events: this.events,
      keyring: channelKeyring(this.options, this.generation, this.events),
    };
    this.clientServer = new RuntimeClientServer({
      ...channels,
      handlers: this.handlers,
      pending: this.pending,
    });
    this.fanout = new RuntimeFanout({ ...channels, handlers: this.fanoutHandlers });
    this.objectLayer = new RuntimeObjects({
      options: this.options,
      jobs: this.jobs,
      events: this.events,
      pending: this.pending,
      node: (mesh) => this.meshes.nodes.get(mesh),
      sessions: () => (this.options.sessions.size > 0 ? this.sessions.host : undefined),
    });
    const objectsHost = {
      objectLayer: (what: string) => this.startedObjects(what),
      requestTimeoutMs: this.options.requestTimeoutMs,
    };
    this.objects = new ZLinkObjects(objectsHost);
    this.spotPublisher = new ZLinkSpotPublisher(objectsHost);
    this.meshes = new RuntimeMeshes({
      objectTypes: (mesh) => this.objectLayer.advertisedTypes(mesh),
      options: this.options,
      generation: this.generation,
      processTag: this.clientId,
      channelHandlers: this.handlers,
      nodeHandlers: this.nodeHandlers,
      jobs: this.jobs,
      events: this.events,
      pending: this.pending,
    });
    this.channelPaths = { clientServer: this.clientServer, meshes: this.meshes };
    this.sessions = new RuntimeSessions({ options: this.options, jobs: this.jobs, events: this.events });
    // Objects after the meshes: they ride on the object mesh's MeshNode; sessions on the objects.
    this.topologies = [this.clientServer, this.meshes, this.objectLayer, this.sessions, this.fanout];
  }

  /**
   * The `@Spot` / `@Actor` classes this process hosts and how to build their instances (the Nest
   * module passes its DI; default: `new` and plain method calls). Only before `start()`.
   */
  registerObjectClasses(classes: ObjectClassRegistry, instances?: ObjectInstances): void {
    this.beforeStart('object classes');
    this.objectLayer.use(classes, instances);
  }

  private async startedObjects(what: string): Promise<ObjectLayer> {
    if (this.state !== 'started') await this.untilStarted(what);
    return this.objectLayer.started(what);
  }

  /** Before `start()`, or after it on a channel served here (handler-checks.ts); else `Configuration`. */
  registerChannelHandler(registration: ChannelHandlerRegistration): void {
    if (this.state === 'starting' || this.state === 'started')
      checkLateChannelHandler(this.options, registration, (channel) => this.meshes.channelRole(channel));
    else this.beforeStart(`handler ${registration.source}`);
    this.handlers.register(registration);
  }

  /** Registers a Node direct handler for MeshName `mesh`; only before `start()`. */
  registerNodeHandler(registration: NodeHandlerRegistration): void {
    this.beforeStart(`node handler ${registration.source}`);
    this.nodeHandlers.register(registration);
  }

  /** Registers a fanout handler (by channel and packet name); only before `start()`. */
  registerFanoutHandler(registration: FanoutHandlerRegistration): void {
    this.beforeStart(`fanout handler ${registration.source}`);
    this.fanoutHandlers.register(registration);
  }

  private beforeStart(field: string): void {
    if (this.state !== 'created')
      throw configurationError(field, 'handlers must be registered before the runtime starts');
  }

  /**
   * Checks handlers against the topology, binds every Server listener and connects every Client. Resolves
   * once listeners are bound; it does not wait for clients to become ready
   * (docs/protocol.md#when-there-is-no-candidate).
   */
  start(): Promise<void> {
    this.started ??= this.doStart();
    return this.started;
  }

  private async doStart(): Promise<void> {
    this.state = 'starting';
    // close() may run while start waits: from then on it opens nothing more.
    const starting = () => this.state === 'starting';
    checkHandlers(
      this.options,
      { channels: this.handlers, nodes: this.nodeHandlers, fanout: this.fanoutHandlers },
      (channel) => this.meshes.channelRole(channel),
    );
    this.objectLayer.checkClasses();
    const storeOptions = this.options.locationStore;
    try {
      this.tracing = await loadTracePropagation(this.options.tracing);
      const location = storeOptions ? await RuntimeLocation.create(storeOptions, this.events) : undefined;
      this.location = location;
      const context = { stillStarting: starting, location, tracing: this.tracing };
      for (const topology of this.topologies) await topology.bind(context);
      // Published only once every listener is bound: a descriptor always names a live endpoint.
      await location?.publish(this.topologies.flatMap((t) => t.descriptors()));
      if (this.state !== 'starting')
        throw new ZLinkError('Shutdown', 'the runtime was closed while starting');
      for (const topology of this.topologies) topology.connect();
      await Promise.all(location ? this.topologies.flatMap((t) => t.discover(location)) : []);
      if (this.state !== 'starting')
        throw new ZLinkError('Shutdown', 'the runtime was closed while starting');
    } catch (error) {
      await this.close();
      throw error;
    }
    this.state = 'started';
  }

  /** `CallSubmitter`: the route client's calls land here. */
  submit(call: CallSubmission): Promise<unknown> {
    // Not an async function: a started runtime submits in the caller's turn with no extra promise.
    if (this.state !== 'started')
      return this.untilStarted(`${call.kind} ${targetName(call.target)}/${call.packet}`).then(() =>
        this.submit(call),
      );
    try {
      return this.submitStarted(call);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private submitStarted(call: CallSubmission): Promise<unknown> {
    const { target } = call;
    if (target.kind === 'object') return this.objectLayer.submit(call, target, this.tracing);
    if (target.kind === 'node') {
      const submit = toSubmission(call, this.options.requestTimeoutMs, this.tracing);
      return this.meshes.submitToNode(call.kind, target.mesh, target.rid, submit);
    }
    return submitToChannel(call, target.channel, this.channelPaths, this.options, this.tracing);
  }

  /**
   * `FanoutSubmitter`: publishes land here (done on local admission:
   * docs/protocol.md#when-a-call-is-finished).
   */
  publish(call: PublishCall): Promise<void> {
    if (this.state !== 'started')
      return this.untilStarted(`publish ${call.channel}/${call.packet}`).then(() => this.publish(call));
    try {
      const timeoutMs = call.timeoutMs ?? this.options.requestTimeoutMs;
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
        throw invalidArgument('timeoutMs', `must be a positive number, got ${timeoutMs}`);
      return this.fanout.publish({ ...call, timeoutMs });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Calls before `start()` fail; calls during it wait for it; calls after `close()` end `Shutdown`. */
  private async untilStarted(what: string): Promise<void> {
    if (this.state === 'created') {
      // Waiting here could deadlock a Nest app calling from onModuleInit (start comes after it).
      throw new ZLinkError(
        'Unavailable',
        `${what}: the runtime has not started (call start(), or wait for application bootstrap)`,
      );
    }
    if (this.state === 'starting') await this.started?.catch(() => undefined);
    if (this.state !== 'started') throw new ZLinkError('Shutdown', `${what}: the runtime is shutting down`);
  }

  /**
   * Changes the local Server weight of a channel at run time (0 stops new selections, the listener
   * stays open). Throws `InvalidArgument` outside 0..10000, `NotFound` when this process does not
   * serve the channel.
   */
  setChannelWeight(channel: string, weight: number): void {
    if (!isValidWeight(weight)) {
      throw invalidArgument(
        `weight of '${channel}'`,
        `must be an integer ${WEIGHT_MIN}..${WEIGHT_MAX}, got ${String(weight)}`,
      );
    }
    if (this.clientServer.setWeight(channel, weight)) return;
    if (this.meshes.forChannel(channel)?.setWeight(channel, weight)) return;
    throw new ZLinkError('NotFound', `channel '${channel}' has no started Server role in this process`);
  }

  /**
   * Drains every local Server (docs/protocol.md#drain): clients stop selecting them, accepted work finishes
   * up to `drainTimeoutMs`, then the listeners close. Client roles keep working.
   */
  async drain(): Promise<void> {
    if (this.state !== 'started') return;
    await Promise.all(this.topologies.map((t) => t.drain(this.options.drainTimeoutMs)));
  }

  /** The advertised endpoint of a local Server listener or fanout publisher, once bound. */
  endpoint(channel: string): string | undefined {
    return this.clientServer.endpoint(channel) ?? this.fanout.publishers.get(channel)?.endpoint;
  }

  /** The endpoint this process uses for its own listener (loopback for a wildcard bind). */
  localEndpoint(channel: string): string | undefined {
    return this.clientServer.localEndpoint(channel) ?? this.fanout.publishers.get(channel)?.localEndpoint;
  }

  /** Roles, peers, candidates, readiness and generations of every topology, at this moment. */
  snapshot(): ZLinkSnapshot {
    const objects = this.objectLayer.snapshot();
    return {
      channels: this.clientServer.snapshot(),
      meshes: this.meshes.snapshot(),
      fanout: this.fanout.snapshot(),
      ...(this.location && { locationStore: this.location.snapshot() }),
      ...(objects && { objects }),
      ...(this.options.sessions.size > 0 && { sessions: this.sessions.snapshot() }),
      pendingRequests: this.pending.size,
      lateReplies: this.pending.counters.late,
      activeHandlers: this.jobs.active,
    };
  }

  /** Counters and latency histograms per channel (and per mesh for Node direct), at this moment. */
  metrics(): MetricsSnapshot {
    return this.events.metrics.snapshot(this.events.counts);
  }

  /** `metrics()` in the Prometheus text format, for a `/metrics` route. */
  prometheus(): string {
    return toPrometheusText(this.metrics());
  }

  /** The lifecycle state: `created`, `starting`, `started`, `closing` or `closed`. */
  get status(): RuntimeState {
    return this.state;
  }

  /** One bounded round trip to the Location Store (see `checkZLinkHealth`); `undefined` without one. */
  async checkStore(timeoutMs = 1000): Promise<StoreCheck | undefined> {
    return this.location?.check(timeoutMs);
  }

  /** The NodeRid of this process's MeshNode on `mesh`. */
  rid(mesh: string): string | undefined {
    return this.meshes.nodes.get(mesh)?.rid;
  }

  /** The advertised endpoint of the MeshNode on `mesh`, once bound (peers list it in `peers`). */
  meshEndpoint(mesh: string): string | undefined {
    return this.meshes.nodes.get(mesh)?.endpoint;
  }

  /** Resolves once `count` peers of `mesh` finished their handshake (or rejects `Timeout`). */
  async waitForPeers(mesh: string, count = 1, timeoutMs = CANDIDATE_WAIT_CAP_MS): Promise<void> {
    await this.meshes.waitForPeers(mesh, count, timeoutMs);
  }

  /** Resolves when `channel` has at least `count` selectable candidates (or rejects `Timeout`). */
  async waitForCandidates(channel: string, count = 1, timeoutMs = CANDIDATE_WAIT_CAP_MS): Promise<void> {
    if (this.meshes.forChannel(channel)) return this.meshes.waitForCandidates(channel, count, timeoutMs);
    const client = this.clientServer.client(channel);
    if (!client)
      throw new ZLinkError('NotConfigured', `channel '${channel}' has no Client role in this process`);
    await client.waitForCandidates(count, timeoutMs);
  }

  /**
   * Stops everything: new calls end `Shutdown`, pending requests end `Shutdown`, every socket
   * closes. Idempotent.
   */
  async close(): Promise<void> {
    if (this.state === 'closed' || this.state === 'closing') return;
    this.state = 'closing';
    this.pending.failAll((d) => new ZLinkError('Shutdown', `${d}: the runtime is shutting down`));
    // Sessions end first, so their Actors hear it; objects are released while this node still holds
    // its lease (nobody may take them over before their records are gone); then descriptors go, so
    // others stop finding this process before its sockets close.
    await this.sessions.close();
    await this.objectLayer.close();
    await this.location?.close();
    for (const topology of this.topologies) await topology.close();
    this.state = 'closed';
  }

  /** @internal for tests: how often a Client's candidate list was rebuilt (a call never rebuilds it). */
  clientChannel(channel: string): { readonly rebuilds: number } | undefined {
    return this.clientServer.client(channel);
  }
}
