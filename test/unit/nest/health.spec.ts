/**
 * `ZLinkHealthIndicator`: the Terminus face of `checkZLinkHealth`. It never rejects (a down runtime is
 * a `down` result, which Terminus turns into a 503), its `down` message is every reason at once, and
 * both results carry the whole report. The rules of the report itself are
 * test/unit/runtime/health.spec.ts; the indicator over real sockets test/integration/nest/health.spec.ts.
 */
import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { HealthIndicatorService } from '@nestjs/terminus';
import { normalizeOptions } from '../../../lib/core/options/index.js';
import { ZLinkHealthIndicator } from '../../../lib/nest/health/index.js';
import { HEALTH_STORE_TIMEOUT_MS, healthReport } from '../../../lib/runtime/health.js';
import type { ZLinkRuntime } from '../../../lib/runtime/index.js';
import type { ZLinkSnapshot } from '../../../lib/runtime/snapshot.js';
import { snapshot } from '../runtime/snapshots.js';

const EMPTY = snapshot();

/** A ClientServer server that drains: one reason each. */
const draining = (channel: string) =>
  ({
    channel,
    arrangement: 'client-server',
    role: 'server',
    server: {
      endpoint: 'tcp://127.0.0.1:1',
      serverRid: 's-1',
      generation: 'g',
      weight: 100,
      draining: true,
      revision: 1,
      activeHandlers: 0,
    },
  }) as const;

const DRAINING = snapshot({ channels: [draining('billing'), draining('orders')] });
const SERVERS = normalizeOptions({ clientServer: { billing: { server: {} }, orders: { server: {} } } });

/** What `checkZLinkHealth` reads of a runtime, and the store timeouts it was asked for. */
function runtime(status: string, snap: ZLinkSnapshot, options = normalizeOptions({})) {
  const storeTimeouts: number[] = [];
  const fake = {
    status,
    options,
    snapshot: () => snap,
    checkStore: async (timeoutMs: number) => {
      storeTimeouts.push(timeoutMs);
      return undefined;
    },
  };
  return { runtime: fake as unknown as ZLinkRuntime, storeTimeouts };
}

describe('ZLinkHealthIndicator', () => {
  it('is up, under the given key, with the report as details when the runtime is healthy', async () => {
    const { runtime: healthy } = runtime('started', EMPTY);
    const result = await new ZLinkHealthIndicator(healthy, new HealthIndicatorService()).isHealthy('zlink');
    const { healthy: _, ...details } = healthReport('started', EMPTY, normalizeOptions({}), undefined);
    expect(result).toEqual({ zlink: { status: 'up', ...details } });
    expect(result.zlink).not.toHaveProperty('message');
  });

  it("is down, not rejected, with every reason in one message and the report's reasons beside it", async () => {
    const { runtime: down } = runtime('started', DRAINING, SERVERS);
    const result = await new ZLinkHealthIndicator(down, new HealthIndicatorService()).isHealthy('cluster');
    const report = healthReport('started', DRAINING, SERVERS, undefined);
    expect(report.reasons).toHaveLength(2);
    expect(result).toEqual({
      cluster: expect.objectContaining({
        status: 'down',
        message: `${report.reasons[0]}; ${report.reasons[1]}`,
        reasons: report.reasons,
        listeners: report.listeners,
      }),
    });
  });

  it('bounds the store round trip by storeTimeoutMs, or by the default one', async () => {
    const { runtime: r, storeTimeouts } = runtime('started', EMPTY);
    const indicator = new ZLinkHealthIndicator(r, new HealthIndicatorService());
    await indicator.isHealthy('zlink');
    await indicator.isHealthy('zlink', { storeTimeoutMs: 250 });
    expect(storeTimeouts).toEqual([HEALTH_STORE_TIMEOUT_MS, 250]);
  });
});
