/**
 * The gateway of the session memory probe (bench/session-memory.ts): a bare ZLinkRuntime (an in-memory
 * Location Store, no Redis, no other process) with one session listener entry of `BENCH_SESSION_KIND`,
 * `tls` with the test certificate of `BENCH_CERT` (`rsa` or `ecdsa`). Every session is welcomed and
 * left idle. `rss` reports its memory after two full collections and the CPU it used so far.
 */
import { type SessionListenOptions, ZLinkRuntime, MemoryLocationStore } from '../../lib/index.js';
import { emit, fail, onCommands } from '../workload/protocol.js';
import { type BenchCert, type BenchSessionKind, benchTls } from './zlink-sessions.js';

const kind = (process.env.BENCH_SESSION_KIND ?? 'tls') as BenchSessionKind;
const cert = (process.env.BENCH_CERT ?? 'rsa') as BenchCert;

function listenEntry(): SessionListenOptions {
  const at = { bindHost: '127.0.0.1', port: 0 };
  const { key, cert: pem } = benchTls(cert);
  if (kind === 'tls') return { ...at, kind, tls: { key, cert: pem } };
  if (kind === 'websocket') return { ...at, kind, path: '/probe' };
  return { ...at, kind };
}

async function main(): Promise<void> {
  const runtime = new ZLinkRuntime({
    locationStore: { instance: new MemoryLocationStore() },
    meshes: {
      probe: {
        rid: `session-memory-${process.pid}`,
        objectRole: 'server',
        listen: { bindHost: '127.0.0.1' },
      },
    },
    // Idle sessions never ping: heartbeats and the idle timeout stay out of the way of the count.
    sessions: { probe: { mesh: 'probe', listen: listenEntry(), heartbeatMs: 600_000, maxSessions: 100_000 } },
  });
  await runtime.start();
  onCommands(
    async (command) => {
      if (command.type === 'rss') {
        global.gc?.();
        global.gc?.();
        const memory = process.memoryUsage();
        const cpu = process.cpuUsage();
        emit({
          type: 'rss',
          rss: memory.rss,
          heapUsed: memory.heapUsed,
          cpuUs: cpu.user + cpu.system,
          sessions: (runtime.snapshot().sessions ?? []).reduce((n, l) => n + l.sessions, 0),
        });
      } else if (command.type !== 'shutdown') throw new Error(`unknown command ${command.type}`);
    },
    () => runtime.close(),
  );
  emit({ type: 'ready', endpoint: runtime.sessions.endpoint('probe') });
}

main().catch(fail);
