/**
 * The health rules on their own (`healthReport`): what a check found — the runtime's state, its
 * snapshot, its options, the store's round trip — and the report it makes. The whole check over real
 * sockets is test/integration/nest/health.spec.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { normalizeOptions } from '../../../lib/core/index.js';
import { healthReport } from '../../../lib/runtime/health.js';
import type { ClientServerChannelSnapshot } from '../../../lib/runtime/snapshot.js';
import { snapshot } from './snapshots.js';

const STORE = { redis: 'redis://127.0.0.1:1' };

function billing(candidates: number, server?: { draining: boolean }): ClientServerChannelSnapshot {
  return {
    channel: 'billing',
    arrangement: 'client-server',
    role: server ? 'client_and_server' : 'client',
    client: { candidates, connections: [] },
    ...(server && {
      server: {
        endpoint: 'tcp://127.0.0.1:1',
        serverRid: 's-1',
        generation: 'g',
        weight: 100,
        draining: server.draining,
        revision: 1,
        activeHandlers: 0,
      },
    }),
  };
}

describe('healthReport', () => {
  it('a runtime not started is not healthy, whatever else', () => {
    const r = healthReport('created', snapshot(), normalizeOptions({}), undefined);
    expect(r).toMatchObject({ healthy: false, reasons: ['the runtime is not started'], runtime: 'created' });
  });

  it('a started client channel with no ready candidate says so; one candidate is enough', () => {
    const options = normalizeOptions({
      clientServer: { billing: { client: { connect: ['tcp://127.0.0.1:1'] } } },
    });
    expect(healthReport('started', snapshot({ channels: [billing(0)] }), options, undefined).reasons).toEqual(
      ["client channel 'billing' has no ready candidate"],
    );
    const ok = healthReport('started', snapshot({ channels: [billing(1)] }), options, undefined);
    expect(ok).toMatchObject({
      healthy: true,
      reasons: [],
      channels: [{ channel: 'billing', readyCandidates: 1 }],
    });
  });

  it('a draining server is draining, and not healthy, unless the drain is the fence', () => {
    const options = normalizeOptions({ clientServer: { billing: { client: {}, server: {} } } });
    const draining = healthReport(
      'started',
      snapshot({ channels: [billing(1, { draining: true })] }),
      options,
      undefined,
    );
    expect(draining).toMatchObject({ healthy: false, draining: true });
    expect(draining.listeners).toEqual([
      { kind: 'client-server', name: 'billing', state: 'draining', endpoint: 'tcp://127.0.0.1:1' },
    ]);
    const withStore = normalizeOptions({
      clientServer: { billing: { client: {}, server: {} } },
      locationStore: STORE,
    });
    const fenced = healthReport(
      'started',
      snapshot({
        channels: [billing(1, { draining: true })],
        locationStore: { fenced: true, discovery: [] },
      }),
      withStore,
      { answers: true, responseTimeMs: 2 },
    );
    expect(fenced.draining).toBe(false);
    expect(fenced.reasons).toEqual([
      'the owner lease is fenced: new business messages are refused until a refresh succeeds',
    ]);
  });

  it('a configured store that does not answer is a reason with its error; no check yet says not connected', () => {
    const options = normalizeOptions({ locationStore: STORE });
    const down = healthReport('started', snapshot(), options, {
      answers: false,
      responseTimeMs: 1000,
      error: 'no answer within 1000 ms',
    });
    expect(down.reasons).toEqual(['the Location Store does not answer (no answer within 1000 ms)']);
    expect(down.store).toMatchObject({ configured: true, answers: false, error: 'no answer within 1000 ms' });
    expect(healthReport('created', snapshot(), options, undefined).store).toMatchObject({
      answers: false,
      error: 'not connected: the runtime has not started',
    });
  });

  it('a session listener is reported with its sessions, and down while it no longer accepts', () => {
    const options = normalizeOptions({
      locationStore: STORE,
      meshes: { world: { objectRole: 'client' } },
      sessions: { players: { mesh: 'world' } },
    });
    const listener = (accepting: boolean) => ({
      listener: 'players',
      kind: 'tcp' as const,
      endpoint: 'tcp://127.0.0.1:7000',
      sessions: 12,
      handshaking: 0,
      accepting,
      heldBytes: 0,
      peakConnectionBytes: 0,
      framesIn: 0,
      framesOut: 0,
    });
    const store = { answers: true, responseTimeMs: 1 };
    const up = healthReport('started', snapshot({ sessions: [listener(true)] }), options, store);
    expect(up.listeners).toContainEqual({
      kind: 'session',
      name: 'players',
      state: 'bound',
      endpoint: 'tcp://127.0.0.1:7000',
      sessions: 12,
    });
    expect(up.reasons.filter((r) => r.includes('players'))).toEqual([]);
    const draining = healthReport('started', snapshot({ sessions: [listener(false)] }), options, store);
    expect(draining.reasons).toContain(
      "the session listener 'players' is draining (a drain closes its listener when it ends)",
    );
    expect(healthReport('started', snapshot(), options, store).reasons).toContain(
      "the session listener 'players' is not bound",
    );
  });
});
