import { describe, expect, it } from '@jest/globals';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';

describe('smoke', () => {
  it('local server round trip', async () => {
    const rt = new ZLinkRuntime({ clientServer: { billing: { server: { listen: { bindHost: '127.0.0.1' } }, client: {} } } });
    rt.registerChannelHandler({ channel: 'billing', kind: 'request', packet: 'charge', source: 't', handler: (p: any, ctx) => ({ got: p.amount, tenant: ctx.metadata['tenant-id'] }) });
    await rt.start();
    const t0 = Date.now();
    const r = await rt.routeClient.requestToChannel('billing', 'charge', { amount: 5 }).metadata('tenant-id', 't1').async();
    console.log('first call ms', Date.now() - t0);
    expect(r).toEqual({ got: 5, tenant: 't1' });
    const t1 = Date.now();
    const all = await Promise.all(Array.from({ length: 2000 }, (_, i) => rt.routeClient.requestToChannel('billing', 'charge', { amount: i }).async()));
    console.log('2000 reqs ms', Date.now() - t1, rt.snapshot().channels[0]);
    expect(all.length).toBe(2000);
    await rt.close();
  });
});
