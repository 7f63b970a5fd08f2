/**
 * Three OS processes: two Nest billing servers (weights 100 and 300) and one Nest client, over
 * real zeromq on 127.0.0.1. Proves the ClientServer contract between processes (docs/protocol.md#weights-and-drain-state, docs/protocol.md#exactly-one-terminal;
 * docs/protocol.md#select-one, docs/protocol.md#no-resend-after-selection, docs/errors.md#which-call-can-end-with-what, docs/protocol.md#metadata).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildApp, type ChildMessage, readLog } from '../helpers/child-app.js';

async function waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('three processes: two billing servers (100, 300) and one client', () => {
  const dir = mkdtempSync(join(tmpdir(), 'zlink-e2e-'));
  const logA = join(dir, 'a.log');
  const logB = join(dir, 'b.log');
  let serverA: ChildApp;
  let serverB: ChildApp;
  let client: ChildApp;

  beforeAll(async () => {
    serverA = new ChildApp('server-a', 'e2e/billing-server.app.js', {
      rid: 'billing-a',
      weight: 100,
      executionLog: logA,
    });
    serverB = new ChildApp('server-b', 'e2e/billing-server.app.js', {
      rid: 'billing-b',
      weight: 300,
      executionLog: logB,
    });
    const [readyA, readyB] = await Promise.all([serverA.next('ready'), serverB.next('ready')]);
    expect(readyA.generation).not.toEqual(readyB.generation);
    client = new ChildApp('client', 'e2e/billing-client.app.js', {
      billingEndpoints: [readyA.endpoint, readyB.endpoint],
    });
    await client.next('ready');
    await client.call({ type: 'waitReady', count: 2 });
  });

  afterAll(async () => {
    for (const app of [client, serverA, serverB]) app?.kill();
    await Promise.all([client, serverA, serverB].map((app) => app?.exited));
    rmSync(dir, { recursive: true, force: true });
  });

  it('weights 100/300 split 4 000 requests 1:3 (within 1%), metadata arrives as a frozen snapshot', async () => {
    const result = await client.call({ type: 'split', n: 4000, concurrency: 64 }, 60000);
    const counts = result.counts as Record<string, number>;
    expect((counts['billing-a'] ?? 0) + (counts['billing-b'] ?? 0)).toBe(4000);
    expect(Math.abs((counts['billing-a'] ?? 0) / 4000 - 0.25)).toBeLessThanOrEqual(0.01);
    expect(result.allFrozen).toBe(true);
    expect(result.metadataOk).toBe(true);
  });

  it('error reply → RemoteError; unregistered channel → NotFound; no local Client role → NotConfigured', async () => {
    const { results } = (await client.call({ type: 'errors' })) as ChildMessage & {
      results: Record<string, any>;
    };
    expect(results.fail).toMatchObject({ code: 'RemoteError', remoteCode: 'HandlerError' });
    expect(results.fail.message).toContain('card declined for f-1');
    expect(results.notFound).toMatchObject({ code: 'NotFound' });
    expect(results.sendNotFound).toMatchObject({ code: 'NotFound' });
    expect(results.notConfigured).toMatchObject({ code: 'NotConfigured' });
  });

  it('a handler that starts a request on another channel: the original completes once with its own reply, metadata not copied', async () => {
    const { reply } = (await client.call({ type: 'nested' })) as ChildMessage & {
      reply: Record<string, any>;
    };
    expect(reply.orderId).toBe('nested-1');
    expect(reply.outerTenant).toBe('outer-tenant');
    expect(reply.inner).toEqual({ audited: 'nested-1', metadataKeys: [] });
    expect(typeof reply.correlation).toBe('number');
  });

  it('SIGSTOP of a server with requests in flight: heartbeats end them RouteError long before their timeout; after SIGCONT it serves again', async () => {
    const n = 24;
    const started = Date.now();
    client.send({ type: 'hold', n, prefix: 'stop', holdMs: 1500, timeoutMs: 30000 });
    await client.next('holdStarted');
    const arrived = (): string[] =>
      [...readLog(logA), ...readLog(logB)].filter((id) => id.startsWith('stop-'));
    await waitFor(() => arrived().length === n, 10000, 'every held request to reach a server');
    const onA = new Set(readLog(logA).filter((id) => id.startsWith('stop-')));
    serverA.kill('SIGSTOP');
    let done: ChildMessage;
    try {
      done = await client.next('holdDone', 20000);
    } finally {
      serverA.kill('SIGCONT');
    }
    // Far inside the 30 s request timeout: the silent connection was declared lost by heartbeat.
    expect(Date.now() - started).toBeLessThan(20000);
    const outcomes = done.outcomes as { orderId: string; outcome: string; server?: string }[];
    expect(outcomes).toHaveLength(n);
    expect(onA.size).toBeGreaterThan(0);
    for (const o of outcomes) {
      if (onA.has(o.orderId)) expect(o.outcome).toBe('RouteError');
      else expect(o).toMatchObject({ outcome: 'ok', server: 'billing-b' });
    }
    // Resumed, server A reconnects and is a candidate again.
    await client.call({ type: 'waitReady', count: 2 }, 20000);
  });

  it('SIGKILL of a server with requests in flight: each ends once (Timeout or RouteError), none resent, traffic continues', async () => {
    const n = 40;
    client.send({ type: 'hold', n, prefix: 'kill', holdMs: 4000, timeoutMs: 8000 });
    await client.next('holdStarted');
    const arrived = (): string[] =>
      [...readLog(logA), ...readLog(logB)].filter((id) => id.startsWith('kill-'));
    await waitFor(() => arrived().length === n, 10000, 'every held request to reach a server');
    serverA.kill('SIGKILL');
    const done = await client.next('holdDone', 20000);
    const outcomes = done.outcomes as { orderId: string; outcome: string; server?: string }[];

    const onA = new Set(readLog(logA).filter((id) => id.startsWith('kill-')));
    const onB = readLog(logB).filter((id) => id.startsWith('kill-'));
    expect(onA.size).toBeGreaterThan(0);
    expect(outcomes).toHaveLength(n);
    expect(new Set(outcomes.map((o) => o.orderId)).size).toBe(n);
    expect(new Set(onB).size).toBe(onB.length); // nothing ran twice on the survivor
    for (const o of outcomes) {
      if (onA.has(o.orderId)) {
        expect(['RouteError', 'Timeout']).toContain(o.outcome);
        expect(onB).not.toContain(o.orderId); // never resent to the other server
      } else {
        expect(o).toMatchObject({ outcome: 'ok', server: 'billing-b' });
      }
    }

    const after = await client.call({ type: 'split', n: 200, concurrency: 16 }, 30000);
    expect(after.counts).toEqual({ 'billing-b': 200 });
  });

  it('clean shutdown: the client and the surviving server close and exit 0', async () => {
    client.send({ type: 'shutdown' });
    serverB.send({ type: 'shutdown' });
    await Promise.all([client.next('closed', 10000), serverB.next('closed', 10000)]);
    // Both end by themselves (no process.exit), so an open handle would show up as a time-out here.
    const bounded = async (app: ChildApp): Promise<unknown> => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise((r) => (timer = setTimeout(() => r('still running after 10 s'), 10000)));
      try {
        return await Promise.race([app.exited, late]);
      } finally {
        clearTimeout(timer);
      }
    };
    await expect(bounded(client)).resolves.toEqual({ code: 0, signal: null });
    await expect(bounded(serverB)).resolves.toEqual({ code: 0, signal: null });
  });
});
