/**
 * Two OS processes: a standalone Nest microservice (`ZLinkServer`, `@MessagePattern` /
 * `@EventPattern`) and a Nest application calling it through `ClientsModule` + `ZLinkClientProxy`,
 * over real zeromq on 127.0.0.1 (the server's port is chosen by the OS).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';

async function waitFor(predicate: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('two processes: a ZLinkServer microservice and a ClientsModule caller', () => {
  let server: ChildApp;
  let client: ChildApp;
  let serverPid: number;

  beforeAll(async () => {
    server = new ChildApp('microservice', 'e2e/microservice-server.app.js', {});
    const ready = await server.next('ready');
    serverPid = ready.pid as number;
    expect(ready.endpoint).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    client = new ChildApp('caller', 'e2e/microservice-client.app.js', { endpoint: ready.endpoint });
    await client.next('ready');
    await client.call({ type: 'waitReady' });
  });

  afterAll(async () => {
    for (const app of [client, server]) app?.kill();
    await Promise.all([client, server].map((app) => app?.exited));
  });

  it('@MessagePattern request/reply between processes: 500 requests, 16 in flight, each answered once with its own reply and the caller’s metadata', async () => {
    const { replies, pid } = (await client.call(
      { type: 'place', n: 500, concurrency: 16 },
      30000,
    )) as ChildMessage & {
      replies: { id: string; total: number; pid: number; metadata: Record<string, string> }[];
    };
    expect(pid).not.toBe(serverPid);
    expect(replies).toHaveLength(500);
    replies.forEach((reply, i) => {
      expect(reply).toEqual({
        id: `o-${i}`,
        total: i * 10,
        pid: serverPid,
        metadata: { 'tenant-id': 'acme' },
      });
    });
  });

  it('RpcException in the microservice → ZLinkError RemoteError in the caller, with the exception’s payload as details', async () => {
    const { error } = (await client.call({ type: 'reject' })) as ChildMessage & {
      error: Record<string, unknown>;
    };
    expect(error).toMatchObject({
      isZLinkError: true,
      code: 'RemoteError',
      remoteCode: 'HandlerError',
      details: { code: 'E_STOCK', message: 'out of stock for r-1' },
    });
    expect(error.message).toContain('out of stock for r-1');
  });

  it('emit() reaches the @EventPattern handler as a one-way send', async () => {
    await client.call({ type: 'emitEvents', n: 20 });
    let events: { event: { id: string }; kind: string }[] = [];
    await waitFor(
      async () => {
        events = (await server.call({ type: 'events' })).events as typeof events;
        return events.length >= 20;
      },
      10000,
      'the 20 events',
    );
    expect(events.map((e) => e.event.id)).toEqual(Array.from({ length: 20 }, (_, i) => `e-${i}`));
    expect(new Set(events.map((e) => e.kind))).toEqual(new Set(['send']));
  });

  it('unsubscribing before the reply cancels the request: the caller gets nothing and keeps nothing pending; the late reply is dropped; the next call works', async () => {
    await client.call({ type: 'startSlow', id: 'cancel-1', holdMs: 60000 });
    await expect(server.next('slowStarted')).resolves.toMatchObject({ id: 'cancel-1' });
    const unsubscribed = await client.call({ type: 'unsubscribe' });
    expect(unsubscribed).toMatchObject({ before: 1, after: 0 });
    await server.call({ type: 'release', id: 'cancel-1' }); // the handler answers only now
    await expect(server.next('slowDone')).resolves.toMatchObject({ id: 'cancel-1' });
    await waitFor(
      async () => ((await client.call({ type: 'report' })).lateReplies as number) >= 1,
      10000,
      'the late reply to reach the caller',
    );
    const report = await client.call({ type: 'report' });
    expect(report).toMatchObject({ got: [], pending: 0 });
    const { replies } = (await client.call({ type: 'place', n: 1, concurrency: 1 })) as ChildMessage & {
      replies: unknown[];
    };
    expect(replies).toEqual([expect.objectContaining({ id: 'o-0', pid: serverPid })]);
  });

  it('no reply within the proxy’s requestTimeoutMs (500 ms) → ZLinkError Timeout', async () => {
    const result = await client.call({ type: 'timeout', id: 'late-1', holdMs: 60000 });
    expect(result.error).toMatchObject({ isZLinkError: true, code: 'Timeout' });
    expect(result.ms as number).toBeGreaterThanOrEqual(450);
    await expect(server.next('slowStarted')).resolves.toMatchObject({ id: 'late-1' });
    await server.call({ type: 'release', id: 'late-1' });
    await expect(server.next('slowDone')).resolves.toMatchObject({ id: 'late-1' }); // it still ran to its end
  });

  it('clean shutdown: both processes close and exit 0 by themselves', async () => {
    client.send({ type: 'shutdown' });
    await client.next('closed', 10000);
    server.send({ type: 'shutdown' });
    await server.next('closed', 10000);
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
    await expect(bounded(server)).resolves.toEqual({ code: 0, signal: null });
  });
});
