/**
 * A Spot's owner admits calls from the moment its Ready write is in the store, not from the moment it
 * hears back. The store answers the write and other processes' reads at once, and which of its
 * sockets the owner reads first is chance: a caller that read the fresh record can reach the owner
 * before the write's reply does. Here the owner's store connection runs through a proxy that holds
 * back every answer 250 ms, so that window is wide; a caller process calls the id all along its
 * creation. Every call ends NotFound (no record yet), Unavailable `creating` (the record is being
 * built) or with the handler's reply — none is refused for a route the store already called Ready
 * (before, each one in the window ended Unavailable `staleRoute`: the demo's rooms saw it under load).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildApp } from '../helpers/child-app.js';
import { RecordingProxy } from '../helpers/tcp-proxy.js';
import { ObjectCluster, ask, calls, settle } from './object-nodes.js';

describe('an owner that hears its Ready write late still takes the calls of those who read it', () => {
  let cluster: ObjectCluster;
  let proxy: RecordingProxy;
  let server: ChildApp;
  let caller: ChildApp;

  beforeAll(async () => {
    cluster = await ObjectCluster.start('e2e-ready-commit');
    proxy = await RecordingProxy.start({ target: cluster.redis.port, replyDelayMs: 250 });
    [server, caller] = await Promise.all([
      cluster.node('srv', 'server', { redisUrl: `redis://127.0.0.1:${proxy.port}` }),
      cluster.node('cli', 'client'),
    ]);
    await Promise.all([server, caller].map((n) => ask(n, { type: 'waitPeers', count: 1 })));
  }, 60000);

  afterAll(async () => {
    await cluster?.close();
    await proxy?.close();
  });

  it('calls racing the creation end NotFound, Unavailable creating, or ok — never staleRoute', async () => {
    for (const id of ['late-1', 'late-2', 'late-3']) {
      // 400 calls 3 ms apart (over a second): the creation below starts and ends inside them.
      const burst = calls(caller, { targets: [id], perTarget: 400, spacingMs: 3, timeoutMs: 5000, tag: id });
      await new Promise((r) => setTimeout(r, 100));
      const created = await ask<{ refs: Record<string, { rid?: string }> }>(server, {
        type: 'create',
        ids: [id],
        node: 'srv',
      });
      expect(created.refs[id]).toMatchObject({ rid: 'srv' });
      const results = await burst;
      const kinds: Record<string, number> = {};
      for (const r of results) {
        const kind = r.outcome === 'Unavailable' ? `Unavailable/${String(r.reason)}` : r.outcome;
        kinds[kind] = (kinds[kind] ?? 0) + 1;
      }
      expect(
        Object.keys(kinds).filter((k) => !['ok', 'NotFound', 'Unavailable/creating'].includes(k)),
      ).toEqual([]);
      // Calls before the record and after it were both made: the window was covered.
      expect(kinds.NotFound).toBeGreaterThan(0);
      expect(kinds.ok).toBeGreaterThan(50);
    }
    await settle([server, caller]);
  }, 90000);
});
