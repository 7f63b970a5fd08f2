import { GCProfiler, getHeapStatistics } from 'node:v8';

/** What one process spent over a measured run: bytes allocated on V8's heap and CPU time. */
export interface ProcessCost {
  /** Bytes allocated on the JS heap (not Buffer backing stores outside it). */
  readonly allocBytes: number;
  /** User + system CPU time of the whole process (zeromq's I/O thread included), µs. */
  readonly cpuUs: number;
  /** Garbage collections during the run. */
  readonly gcs: number;
}

interface Running {
  readonly profiler: GCProfiler;
  readonly usedAtStart: number;
  readonly cpuAtStart: NodeJS.CpuUsage;
}

let running: Running | undefined;

/** GCProfiler's statistics are camelCase at run time; @types/node gives them getHeapStatistics' names. */
const used = (statistics: unknown): number => (statistics as { usedHeapSize: number }).usedHeapSize;

/**
 * Starts counting. V8 keeps no running total of allocated bytes, so the total is rebuilt from its
 * collections: what the heap grew by between them plus what each one freed (GCProfiler reports the
 * used size before and after every collection).
 */
export function startCost(): void {
  const profiler = new GCProfiler();
  profiler.start();
  running = { profiler, usedAtStart: getHeapStatistics().used_heap_size, cpuAtStart: process.cpuUsage() };
}

/** Ends the count started by `startCost`. */
export function stopCost(): ProcessCost {
  if (!running) throw new Error('no cost count was started');
  const usedAtEnd = getHeapStatistics().used_heap_size;
  const cpu = process.cpuUsage(running.cpuAtStart);
  const { statistics } = running.profiler.stop();
  let freed = 0;
  for (const gc of statistics) freed += used(gc.beforeGC.heapStatistics) - used(gc.afterGC.heapStatistics);
  const cost = {
    allocBytes: usedAtEnd - running.usedAtStart + freed,
    cpuUs: cpu.user + cpu.system,
    gcs: statistics.length,
  };
  running = undefined;
  return cost;
}
