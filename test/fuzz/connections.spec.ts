/**
 * Connection fuzz (issue 27): abuse at the connection level, not the frame level, against every
 * listener type — a MeshNode's ROUTER, a ClientServer listener and a fanout publisher — running in a
 * child process, in plain ZMTP and under CURVE. Another child process attacks it (the test process
 * holds no zeromq socket): many connections announcing the same routing id (the mesh's and another's),
 * half-open connections (nothing, half a greeting, a greeting and silence), greetings with the wrong
 * mechanism or version, connections reset half-way through a frame, ZMTP PINGs, and connections that
 * finish the handshake and never say hello (e2e/connection-abuser.app.ts).
 *
 * Checked: the target never dies; it closes every connection that does not finish its handshake within
 * its handshake bound; afterwards a proper runtime's calls are answered on each listener and an event
 * reaches it from the publisher; the target's memory after the abuse is bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zlinkKeyPair } from '../../lib/index.js';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';

describe.each([
  ['plain ZMTP', false],
  ['CURVE', true],
])('connection abuse on every listener type (%s)', (_mode, secure) => {
  const targetKeys = secure ? zlinkKeyPair() : undefined;
  const clientKeys = secure ? zlinkKeyPair() : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'zlink-connfuzz-'));
  let target: ChildApp;
  let ready: ChildMessage;
  let abuser: ChildApp;

  beforeAll(async () => {
    target = new ChildApp('listeners', 'e2e/curve-node.app.js', {
      keys: targetKeys,
      allow: clientKeys?.publicKey,
      executionLog: join(dir, 'ran.log'),
    });
    ready = await target.next('ready');
    abuser = new ChildApp('abuser', 'e2e/connection-abuser.app.js', {
      endpoints: { mesh: ready.mesh, clientServer: ready.clientServer, fanout: ready.fanout },
      secure,
      serverKey: targetKeys?.publicKey,
      keys: clientKeys,
    });
    await abuser.next('ready');
  }, 30000);

  afterAll(async () => {
    if (abuser?.running) {
      abuser.send({ type: 'shutdown' });
      await Promise.race([abuser.exited, new Promise((r) => setTimeout(r, 5000).unref())]);
      abuser.kill();
    }
    if (target?.running) {
      target.send({ type: 'shutdown' });
      expect(await target.exited).toEqual({ code: 0, signal: null });
    }
    rmSync(dir, { recursive: true, force: true });
  }, 30000);

  it('the target stays up, closes every connection that never finishes its handshake, and serves afterwards', async () => {
    const abuse = await abuser.call({ type: 'abuse' }, 60000);
    expect({ halfOpenLeft: abuse.halfOpenLeft, running: target.running }).toEqual({
      halfOpenLeft: 0,
      running: true,
    });
    const verify = await abuser.call({ type: 'verify' }, 60000);
    expect([verify.cs, verify.node]).toEqual([{ n: 1 }, { n: 2 }]);
    let events: unknown[] = [];
    const deadline = Date.now() + 10000;
    while (events.length === 0 && Date.now() < deadline) {
      await target.call({ type: 'publish', event: { n: 3 } });
      events = (await abuser.call({ type: 'events' })).events as unknown[];
    }
    expect(events[0]).toEqual({ n: 3 });

    const report = await target.call({ type: 'report' });
    const memory = report.memory as NodeJS.MemoryUsage;
    console.log(
      `connection fuzz (${secure ? 'CURVE' : 'plain'}): ${String(abuse.raw)} raw (${String(abuse.half)} half-open, ` +
        `slowest closed after ${String(abuse.slowestCloseMs)} ms) and ${String(abuse.zeromq)} zeromq connections; ` +
        `target rss ${(memory.rss / 1048576).toFixed(1)} MB; counted ${JSON.stringify(report.counts)}`,
    );
    expect(memory.rss).toBeLessThan(400 * 1024 * 1024);
    expect(target.running).toBe(true);
  }, 120000);
});
