/** What the resolver and route cache tests share: a fake clock, a lease view, authority records. */
import {
  type AuthorityRecord,
  type AuthorityState,
  type InboundObjectRecord,
  JobQueue,
  ObjectClassRegistry,
  PendingRequests,
  StoreHealth,
  ZLinkEvents,
  plainObjectInstances,
  type MeshLink,
  type MeshPeerEvent,
  type MulticastTopic,
  type NodeRun,
  type ObjectKind,
  type ObjectRecordKind,
  encodePayload,
} from '../../../lib/core/index.js';
import { type ObjectRouteFences, wireAddress } from '../../../lib/spot/wire/index.js';
import type { InboundObjectCall } from '../../../lib/spot/owner/object-dispatch.js';
import { type Clock, ObjectLayer, type OwnerLeaseView, SYSTEM_CLOCK } from '../../../lib/spot/index.js';
import { type ReadyRoute } from '../../../lib/spot/resolve/index.js';
import { ObjectHost } from '../../../lib/spot/owner/object-host.js';
import { runRuntimeCall } from '../../../lib/spot/membership/member-turns.js';
import { MemoryLocationStore } from '../../../lib/store/memory/memory-location-store.js';

export const MESH = 'objects';

export class FakeClock implements Clock {
  constructor(public t = 1_000_000) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/** Leases by node run; a run not set holds none. */
export class FakeLeases implements OwnerLeaseView {
  private readonly deadlines = new Map<string, number>();
  asked = 0;
  set(run: NodeRun, deadline: number | undefined): void {
    const name = `${run.rid}/${run.nodeGeneration}`;
    if (deadline === undefined) this.deadlines.delete(name);
    else this.deadlines.set(name, deadline);
  }
  admissionDeadline(owner: NodeRun): number | undefined {
    this.asked++;
    return this.deadlines.get(`${owner.rid}/${owner.nodeGeneration}`);
  }
}

export const RUN_A: NodeRun = { rid: 'node-a', nodeGeneration: 'ga1' };
export const RUN_B: NodeRun = { rid: 'node-b', nodeGeneration: 'gb1' };

export function authority(
  overrides: Partial<AuthorityRecord> = {},
  state: AuthorityState = 'ready',
): AuthorityRecord {
  return {
    type: 'room',
    state,
    owner: RUN_A,
    objectGeneration: 1,
    authorityOwnerGeneration: 1,
    ownerLeaseGeneration: 1,
    ...overrides,
  };
}

/** A Ready route as the resolver would make it, for cache tests that need no store. */
export function route(
  id: string,
  overrides: Partial<ReadyRoute> = {},
  kind: ObjectKind = 'spot',
): ReadyRoute {
  const made = {
    tag: 'ReadyRoute' as const,
    key: { mesh: MESH, kind, id },
    type: 'room',
    owner: RUN_A,
    objectGeneration: 1,
    authorityOwnerGeneration: 1,
    ownerLeaseGeneration: 1,
    storeVersion: 1,
    admissionDeadline: Number.MAX_SAFE_INTEGER,
    ...overrides,
  };
  return { ...made, address: overrides.address ?? wireAddress(kind, id, made) };
}

/** A MeshLink whose one peer (RUN_B) becomes ready when the test says so; sends are kept. */
export class FakeLink implements MeshLink {
  readonly mesh = MESH;
  readonly self = { rid: RUN_A.rid, generation: RUN_A.nodeGeneration };
  ready = false;
  readonly sent: Uint8Array[] = [];
  private readonly listeners = new Set<(event: MeshPeerEvent) => void>();

  up(): void {
    this.ready = true;
    const peer = {
      rid: RUN_B.rid,
      generation: RUN_B.nodeGeneration,
      objectRole: 'server' as const,
      objectTypes: [],
      topics: [],
    };
    for (const l of [...this.listeners]) l({ type: 'up', peer });
  }
  get subscribers(): number {
    return this.listeners.size;
  }
  send(_to: unknown, record: Uint8Array): boolean {
    this.sent.push(record);
    return true;
  }
  sendToEach(to: readonly unknown[], record: Uint8Array): number {
    for (const _ of to) this.sent.push(record);
    return to.length;
  }
  /** What `advertise` was given, in order. */
  readonly advertised: (readonly MulticastTopic[])[] = [];
  advertise(topics: readonly MulticastTopic[]): void {
    this.advertised.push(topics);
  }
  /** What `answer` was given, in order: replies, relays, notices. */
  readonly answered: { to: string; bytes: Uint8Array }[] = [];
  answer(to: string, bytes: Uint8Array): boolean {
    this.answered.push({ to, bytes });
    return true;
  }
  waitForSpace(): Promise<void> {
    return Promise.resolve();
  }
  private readonly records = new Set<(record: InboundObjectRecord) => void>();
  onRecord(listener: (record: InboundObjectRecord) => void): () => void {
    this.records.add(listener);
    return () => this.records.delete(listener);
  }
  /** Hands `bytes` to the record listeners as a record of `kind` from RUN_B. */
  deliver(kind: ObjectRecordKind, bytes: Uint8Array): void {
    const from = { rid: RUN_B.rid, generation: RUN_B.nodeGeneration };
    for (const l of [...this.records]) l({ kind, from, bytes });
  }
  onPeer(listener: (event: MeshPeerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  isReady(rid: string, generation: string): boolean {
    return this.ready && rid === RUN_B.rid && generation === RUN_B.nodeGeneration;
  }
  peers(): [] {
    return [];
  }
  objectServers(): [] {
    return [];
  }
}

/** An ObjectLayer on `link` as node RUN_A, on an in-memory store, nothing hosted; its events too. */
export function objectLayer(
  link: MeshLink,
  role: 'client' | 'server',
  messageFollowDurationMs = 30_000,
): { objects: ObjectLayer; events: ZLinkEvents } {
  const events = new ZLinkEvents();
  const leases = new FakeLeases();
  leases.set(RUN_B, Date.now() + 60_000);
  const objects = new ObjectLayer({
    mesh: MESH,
    self: RUN_A,
    role,
    options: {
      routeCacheMaxAgeMs: 15_000,
      messageFollowDurationMs,
      objectQueueLimit: 16,
      messageFollowNotice: true,
      onDrain: 'deactivate',
      multicastMaxEventBytes: 1 << 20,
    },
    link,
    store: new MemoryLocationStore().authorityStore(),
    relocationStore: undefined,
    leases,
    clock: SYSTEM_CLOCK,
    classes: new ObjectClassRegistry(),
    instances: plainObjectInstances,
    jobs: new JobQueue(16),
    pending: new PendingRequests(),
    events,
    tracing: undefined,
    leaseFenced: () => false,
    leaseGeneration: () => 1,
    closeTimeoutMs: 1000,
    storeHealth: new StoreHealth(events),
    defaultTimeoutMs: 5000,
  });
  return { objects, events };
}

/** An ObjectHost as node `self` hosting `classes`: jobs 4, queue limit 8; override what a test needs. */
export function objectHost(
  self: NodeRun,
  classes: ObjectClassRegistry,
  overrides: Partial<ConstructorParameters<typeof ObjectHost>[0]> = {},
): ObjectHost {
  return new ObjectHost({
    mesh: MESH,
    self,
    store: new MemoryLocationStore().authorityStore(),
    leases: new FakeLeases(),
    clock: SYSTEM_CLOCK,
    // Every peer's link ready: whether an owner lives is then its lease's word (tests set it).
    link: { isReady: () => true },
    runtimeCall: runRuntimeCall,
    publish: {
      call: () => ({ async: () => Promise.reject(new Error('no Logical Multicast in this test')) }),
    },
    classes,
    instances: plainObjectInstances,
    jobs: new JobQueue(4),
    queueLimit: 8,
    events: new ZLinkEvents(),
    tracing: undefined,
    leaseFenced: () => false,
    leaseGeneration: () => 1,
    closeTimeoutMs: 1000,
    ...overrides,
  });
}

/** A request from node run `c` to Spot `id` on route `fences`, as an owner receives it (null payload). */
export function inboundRequest(
  id: string,
  fences: ObjectRouteFences,
  packet: string,
  operationId = 'op',
): InboundObjectCall {
  return {
    messageKind: 'request',
    objectKind: 'spot',
    id,
    fences,
    operationId,
    packet,
    metadata: undefined,
    payload: encodePayload(null),
    trace: undefined,
    correlation: 1,
    origin: { rid: 'c', nodeGeneration: 'gc' },
    sourceRid: 'c',
    hops: 0,
  };
}
