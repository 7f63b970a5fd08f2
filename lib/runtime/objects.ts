import { ZLinkError, invalidArgument } from '../core/errors.js';
import type { TracePropagation } from '../core/wire/index.js';
import type { ZLinkEvents } from '../core/observe/index.js';
import type { JobQueue, PendingRequests } from '../core/calls/index.js';
import {
  type AuthorityStore,
  type LocationDescriptor,
  type RelocationStore,
  watchedAuthorityStore,
} from '../core/ports/index.js';
import type { NormalizedMesh, NormalizedOptions } from '../core/options/index.js';
import {
  type ObjectClassRegistry,
  type ObjectInstances,
  ObjectClassRegistry as Registry,
  checkObjectClasses,
  plainObjectInstances,
} from '../core/objects/index.js';
import { ObjectLayer, SYSTEM_CLOCK, type SessionHost, advertisedType } from '../spot/index.js';
import { createAuthorityStore, createRelocationStore } from '../store/index.js';
import type { MeshNode } from '../transport/index.js';
import { DescriptorLeaseView } from './lease-view.js';
import { RuntimeStateStores } from './state-stores.js';
import type { CallSubmission, CallTarget } from './calls.js';
import type { RuntimeLocation } from './location.js';
import { toObjectSubmission } from './submission.js';
import type { ObjectsSnapshot } from './snapshot.js';
import type { BindContext, Topology } from './topology.js';

export interface ObjectsConfig {
  readonly options: NormalizedOptions;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
  readonly pending: PendingRequests;
  /** The MeshNode of a MeshName, once the meshes are bound. */
  readonly node: (mesh: string) => MeshNode | undefined;
  /** The Session owner's host, when this runtime has session listeners (they ride on the object mesh). */
  readonly sessions: () => SessionHost | undefined;
}

/**
 * The object layer in the runtime (docs/architecture.md#the-object-layer): on the one mesh whose `objectRole`
 * is `client` or `server`, with the Authority Store beside the Location Store and the owner leases read from
 * that mesh's node descriptors. Bound after the meshes (it rides on their MeshNode); publishes nothing of its
 * own (the node's descriptor and state carry its role and hosted types).
 */
export class RuntimeObjects implements Topology {
  private classes: ObjectClassRegistry = new Registry();
  private instances: ObjectInstances = plainObjectInstances;
  private layer: ObjectLayer | undefined;
  private store: { store: AuthorityStore; owned: boolean } | undefined;
  private leases: DescriptorLeaseView | undefined;
  private leaseEpoch = 1;
  private readonly mesh: [string, NormalizedMesh] | undefined;

  constructor(private readonly config: ObjectsConfig) {
    this.mesh = [...config.options.meshes].find(([, m]) => m.objectRole !== 'none');
  }

  /** The object classes this process hosts and how to build them (before start). */
  use(classes: ObjectClassRegistry, instances: ObjectInstances | undefined): void {
    this.classes = classes;
    if (instances) this.instances = instances;
  }

  /**
   * Object classes need a Location Store and an `objectRole: 'server'` mesh: `Configuration` before any
   * socket opens.
   */
  checkClasses(): void {
    checkObjectClasses(this.config.options, this.classes);
  }

  /** The MeshName of the object mesh, if any. */
  get meshName(): string | undefined {
    return this.mesh?.[0];
  }

  /** What the object mesh's node advertises in its state: `spot:Room`, `actor:Player` (server role only). */
  advertisedTypes(mesh: string): readonly string[] | undefined {
    if (this.mesh?.[0] !== mesh || this.mesh[1].objectRole !== 'server') return undefined;
    return this.classes.all().map((c) => advertisedType(c.kind, c.type));
  }

  /** The layer once started; `undefined` in a process without an object mesh. */
  get objects(): ObjectLayer | undefined {
    return this.layer;
  }

  async bind({ location, tracing }: BindContext): Promise<void> {
    if (!this.mesh || !location) return;
    const [mesh, m] = this.mesh;
    const node = this.config.node(mesh);
    if (!node) return;
    const options = this.config.options.locationStore;
    if (!options || !m.objects) return;
    const built = await createAuthorityStore(options);
    // One store to a caller: its failures and answers count with the Location Store's (`location.health`).
    this.store = { store: watchedAuthorityStore(built.store, location.health), owned: built.owned };
    const relocation = this.config.options.relocationStore;
    if (relocation) this.relocationStore = await createRelocationStore(relocation);
    if (m.objectRole === 'server') await this.states.start(this.config.options, this.classes);
    const leases = new DescriptorLeaseView(options.lease, SYSTEM_CLOCK, (run) =>
      this.layer?.ownerRunEnded(run),
    );
    this.leases = leases;
    const fenced = () => location.fenced;
    this.layer = new ObjectLayer({
      mesh,
      self: { rid: node.rid, nodeGeneration: node.state.generation },
      role: m.objectRole === 'server' ? 'server' : 'client',
      options: m.objects,
      link: node.objectLink(),
      store: this.store.store,
      relocationStore: this.relocationStore?.store,
      leases,
      clock: SYSTEM_CLOCK,
      classes: this.classes,
      instances: this.instances,
      jobs: this.config.jobs,
      pending: this.config.pending,
      events: this.config.events,
      tracing,
      leaseFenced: fenced,
      leaseGeneration: () => this.leaseEpoch,
      closeTimeoutMs: this.config.options.drainTimeoutMs,
      storeHealth: location.health,
      sessions: this.config.sessions()?.records,
      defaultTimeoutMs: this.config.options.requestTimeoutMs,
      durableOf: this.states.durableOf,
    });
    this.config.sessions()?.attach(this.layer.sessionObjects);
    this.offFence = location.onFence((isFenced) => {
      if (isFenced || this.closed) return;
      this.leaseEpoch++;
      void this.layer?.leaseRegained();
    });
  }

  /**
   * The started layer for a `ZLinkObjects` call: `NotConfigured` without an object mesh, `Shutdown` once
   * closed.
   */
  started(what: string): ObjectLayer {
    if (this.mesh === undefined)
      throw new ZLinkError(
        'NotConfigured',
        `${what}: no mesh of this process has objectRole 'client' or 'server'`,
      );
    if (!this.layer || this.closed) throw new ZLinkError('Shutdown', `${what}: the runtime is shutting down`);
    return this.layer;
  }

  /**
   * A call by global id from the route client, on a started runtime; throws as `started` does, or
   * `InvalidArgument`.
   */
  submit(
    call: CallSubmission,
    target: CallTarget & { kind: 'object' },
    tracing: TracePropagation | undefined,
  ): Promise<unknown> {
    // The name is built only for the error that needs it.
    const layer =
      this.mesh !== undefined && this.layer && !this.closed
        ? this.layer
        : this.started(`${call.kind} ${target.objectKind} '${target.id}'/${call.packet}`);
    if (target.instance && (typeof target.instance.type !== 'string' || target.instance.type === ''))
      throw invalidArgument('type', 'the Instance intent needs a non-empty Spot type');
    return layer.call(toObjectSubmission(call, target, this.config.options.requestTimeoutMs, tracing));
  }

  descriptors(): LocationDescriptor[] {
    return [];
  }

  connect(): void {}

  /**
   * Reads the object mesh's node descriptors for the owner leases (sharing the mesh's own discovery when it
   * has one).
   */
  discover(location: RuntimeLocation): Promise<unknown>[] {
    const leases = this.leases;
    if (!this.mesh || !leases) return [];
    return [location.discover('mesh-node', this.mesh[0], (list) => leases.read(list))];
  }

  /**
   * With `onDrain: 'relocate'` (the default), moves this object server's objects elsewhere first (see
   * `ObjectLayer.drain`).
   */
  async drain(deadlineMs: number): Promise<void> {
    await this.layer?.drain(deadlineMs);
  }

  /** Releases every activation (their records deleted) and closes the Authority Store it built. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.offFence?.();
    await this.layer?.close();
    await this.states.close();
    this.config.sessions()?.attach(undefined);
    if (this.store?.owned) await this.store.store.close().catch(() => undefined);
    if (this.relocationStore?.owned) await this.relocationStore.store.close().catch(() => undefined);
  }

  private closed = false;
  private readonly states = new RuntimeStateStores();
  private relocationStore: { store: RelocationStore; owned: boolean } | undefined;
  private offFence: (() => void) | undefined;

  snapshot(): ObjectsSnapshot | undefined {
    if (!this.mesh || !this.layer) return undefined;
    const s = this.layer.snapshot();
    return {
      mesh: this.mesh[0],
      role: this.mesh[1].objectRole === 'server' ? 'server' : 'client',
      routeCacheSize: s.routeCacheSize,
      fenced: s.fenced,
      activations: s.activations,
    };
  }
}
