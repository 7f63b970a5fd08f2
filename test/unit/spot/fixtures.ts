/** What the resolver and route cache tests share: a fake clock, a lease view, authority records. */
import {
  type AuthorityRecord,
  type AuthorityState,
  type NodeRun,
  type ObjectKind,
  wireAddress,
} from '../../../lib/core/index.js';
import type { Clock, OwnerLeaseView, ReadyRoute } from '../../../lib/spot/index.js';

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
