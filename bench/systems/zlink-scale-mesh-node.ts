/**
 * One MeshNode of the scale bench's mesh (bench/scale.ts): a plain runtime on mesh `bench-scale`
 * with discovery through the Location Store and one Node direct handler, `echo`. Reports
 * `{type:'started', at}` once its listener is bound and `{type:'peers', at}` once it sees every other
 * node ready (wall-clock ms, compared across processes on one machine). Commands: `cpu {durationMs}`
 * → `{type:'cpu', cpuUs, ms}` (idle CPU of the whole process); `latency {to, samples}` →
 * `{type:'latency', p50Us, p99Us}` for sequential Node direct requests.
 * Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX, BENCH_RID, BENCH_NODES (nodes in the mesh, this one included).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ZLinkRuntime } from '../../lib/index.js';
import { PAYLOAD } from '../workload/payload.js';
import { emit, fail, onCommands } from '../workload/protocol.js';
import { quantile } from '../workload/stats.js';
import { objectsLocationStore } from './zlink-objects.js';
import { SCALE_MESH } from './zlink-scale.js';

/** Sixteen processes start at once on two cores: seeing every peer may take a while. */
const PEERS_TIMEOUT_MS = 120_000;

async function main(): Promise<void> {
  const rid = process.env.BENCH_RID;
  const nodes = Number(process.env.BENCH_NODES);
  if (!rid || !Number.isSafeInteger(nodes) || nodes < 2)
    throw new Error('needs BENCH_RID and BENCH_NODES >= 2');
  const runtime = new ZLinkRuntime({
    locationStore: objectsLocationStore(),
    meshes: { [SCALE_MESH]: { rid, discovery: 'auto', listen: { bindHost: '127.0.0.1', port: 0 } } },
  });
  runtime.registerNodeHandler({
    mesh: SCALE_MESH,
    kind: 'request',
    packet: 'echo',
    handler: (payload) => payload,
    source: 'bench echo',
  });
  await runtime.start();
  emit({ type: 'started', at: Date.now() });
  await runtime.waitForPeers(SCALE_MESH, nodes - 1, PEERS_TIMEOUT_MS);
  emit({ type: 'peers', at: Date.now() });

  const route = runtime.routeClient;
  const stop = async (): Promise<void> => {
    setTimeout(() => process.exit(0), 3000).unref();
    await runtime.close();
    process.exit(0);
  };
  onCommands(async (command) => {
    if (command.type === 'cpu') {
      const ms = Number(command.durationMs);
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await sleep(ms);
      const cpu = process.cpuUsage(cpu0);
      emit({ type: 'cpu', cpuUs: cpu.user + cpu.system, ms: performance.now() - t0 });
    } else if (command.type === 'latency') {
      const to = String(command.to);
      const samples = Number(command.samples);
      const us: number[] = [];
      for (let i = 0; i < samples + 100; i++) {
        const t = performance.now();
        await route.requestToNode(SCALE_MESH, to, 'echo', PAYLOAD).async();
        if (i >= 100) us.push((performance.now() - t) * 1000); // the first 100 warm the path up
      }
      const sorted = Float64Array.from(us).sort();
      emit({ type: 'latency', p50Us: quantile(sorted, 0.5), p99Us: quantile(sorted, 0.99) });
    } else if (command.type === 'shutdown') await stop();
    else throw new Error(`unknown command ${command.type}`);
  }, stop);
}

main().catch(fail);
