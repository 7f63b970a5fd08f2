import { describe, expect, it } from '@jest/globals';
import type { ServerDescriptor, ServerState } from '../../../../lib/core/index.js';
import {
  descriptorState,
  replacesState,
  sameIdentity,
  stateFields,
  welcomedState,
} from '../../../../lib/transport/client-server/server-state.js';

/** What a client believes of a server's state, and which record wins. */

const state = (over: Partial<ServerState> = {}): ServerState => ({
  channel: 'orders',
  serverRid: 'server-a',
  generation: 'g1',
  weight: 100,
  draining: false,
  revision: 5,
  ...over,
});

describe('server state rules', () => {
  it('a welcome of the same generation never rolls the revision back', () => {
    const previous = state({ revision: 5, weight: 10 });
    expect(welcomedState(previous, state({ revision: 4 }))).toBe(previous);
    const same = state({ revision: 5, weight: 20 });
    expect(welcomedState(previous, same)).toBe(same);
    const newer = state({ revision: 6 });
    expect(welcomedState(previous, newer)).toBe(newer);
  });

  it('a welcome of another generation (a restarted server) is taken whatever its revision', () => {
    const restarted = state({ generation: 'g2', revision: 1 });
    expect(welcomedState(state({ revision: 9 }), restarted)).toBe(restarted);
    expect(welcomedState(undefined, restarted)).toBe(restarted);
  });

  it('a State record replaces only a larger revision of the same generation', () => {
    const current = state({ revision: 5 });
    expect(replacesState(current, state({ revision: 6 }))).toBe(true);
    expect(replacesState(current, state({ revision: 5 }))).toBe(false);
    expect(replacesState(current, state({ revision: 4 }))).toBe(false);
    expect(replacesState(current, state({ generation: 'g2', revision: 99 }))).toBe(false);
    // Before the first welcome nothing is confirmed: a State record has nothing to replace.
    expect(replacesState(undefined, state())).toBe(false);
  });

  it('a descriptor reads as the State record its server would send, and names its run', () => {
    const d = {
      channel: 'orders',
      rid: 'server-a',
      generation: 'g1',
      weight: 30,
      draining: true,
      revision: 7,
    } as ServerDescriptor;
    expect(descriptorState(d)).toEqual(state({ weight: 30, draining: true, revision: 7 }));
    expect(sameIdentity(d, state())).toBe(true);
    expect(sameIdentity(d, state({ generation: 'g2' }))).toBe(false);
    expect(sameIdentity(d, state({ serverRid: 'server-b' }))).toBe(false);
  });

  it("an event carries the server's identity, weight and drain state", () => {
    expect(stateFields(state())).toEqual({
      serverRid: 'server-a',
      generation: 'g1',
      weight: 100,
      draining: false,
    });
  });
});
