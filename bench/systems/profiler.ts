import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/** `cpu`: V8's sampling CPU profiler; `alloc`: its sampling heap profiler, collected objects kept. */
export type ProfileKind = 'cpu' | 'alloc';

let session: Session | undefined;
let running: ProfileKind | undefined;

/** One sample per this many bytes allocated on average (V8's default is 32 KiB). */
const ALLOC_SAMPLING_BYTES = 4096;

/** Starts a profile of `kind` in this process (the runner's `--cpu-prof` / `--alloc-prof`). */
export async function startProfile(kind: ProfileKind): Promise<void> {
  if (!session) {
    session = new Session();
    session.connect();
  }
  if (kind === 'cpu') {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  } else {
    await session.post('HeapProfiler.enable');
    // Without the two flags the profile keeps only objects still alive at its end: the garbage a
    // call leaves behind, which is what a cut is after, would be missing.
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: ALLOC_SAMPLING_BYTES,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as never);
  }
  running = kind;
}

/** Stops the profile and writes it (`.cpuprofile` or `.heapprofile`, as DevTools reads them). */
export async function stopProfile(file: string): Promise<void> {
  if (!session || !running) throw new Error('no profile was started');
  const { profile } =
    running === 'cpu' ? await session.post('Profiler.stop') : await session.post('HeapProfiler.stopSampling');
  running = undefined;
  writeFileSync(file, JSON.stringify(profile));
}
