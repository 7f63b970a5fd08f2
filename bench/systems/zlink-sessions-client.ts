/**
 * Game clients of the sessions bench (bench/sessions.ts), with the package's Node session client: one
 * session bound to an Actor with `depth` requests outstanding through it, or one-way sends through it
 * (each 256th a request, so the client never outruns `maxInFlight`: it waits for that answer), or
 * `count` idle sessions held open; each command names the gateway port (the listener) it goes to.
 */
import { ZLinkSessionClient } from '../../lib/session-client/index.js';
import { PAYLOAD } from '../workload/payload.js';
import { emit, onCommands } from '../workload/protocol.js';
import type { IdleCommand, RelayCommand } from './zlink-sessions.js';

const idle: ZLinkSessionClient[] = [];

async function relay(c: RelayCommand): Promise<void> {
  const client = new ZLinkSessionClient({ host: '127.0.0.1', port: c.port, requestTimeoutMs: 30_000 });
  await client.connect();
  await client.request('login', c.actor);
  let count = 0;
  let failed = 0;
  const end = performance.now() + c.durationMs;
  const t0 = performance.now();
  if (c.oneway) {
    while (performance.now() < end) {
      for (let i = 0; i < 255; i++) client.send('tap', i);
      count += 255;
      await client.request('echo', 0).catch(() => failed++);
    }
  } else {
    const lane = async (): Promise<void> => {
      while (performance.now() < end) {
        try {
          await client.request('echo', PAYLOAD);
          count++;
        } catch {
          failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: c.depth }, lane));
  }
  const elapsed = performance.now() - t0;
  await client.close();
  emit({ type: 'relay-result', result: { perSec: (count * 1000) / elapsed, count, failed } });
}

async function openIdle(c: IdleCommand): Promise<void> {
  while (idle.length < c.count) {
    const batch = Array.from({ length: Math.min(500, c.count - idle.length) }, async () => {
      const client = new ZLinkSessionClient({ host: '127.0.0.1', port: c.port });
      await client.connect();
      return client;
    });
    idle.push(...(await Promise.all(batch)));
  }
  emit({ type: 'idle-open', count: idle.length });
}

onCommands(
  async (command) => {
    if (command.type === 'relay') await relay(command as unknown as RelayCommand);
    else if (command.type === 'idle') await openIdle(command as unknown as IdleCommand);
    else throw new Error(`unknown command ${command.type}`);
  },
  async () => {
    await Promise.all(idle.map((c) => c.close()));
    process.exit(0);
  },
);
emit({ type: 'ready', pid: process.pid });
