/**
 * Heap measurements for the fuzz and soak suites: `heapUsed` after a full garbage collection.
 *
 * Jest workers do not run with `--expose-gc`; V8 still hands out its `gc` function to a context
 * created after the flag is set, so no special command line is needed.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

let collect: (() => void) | undefined;

function gcFunction(): () => void {
  if (collect) return collect;
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return (collect = exposed);
  v8.setFlagsFromString('--expose-gc');
  return (collect = vm.runInNewContext('gc') as () => void);
}

/** `heapUsed` in bytes after the event loop turned once (pending callbacks ran) and two full collections. */
export async function heapAfterGc(): Promise<number> {
  await new Promise((resolve) => setImmediate(resolve));
  const gc = gcFunction();
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

export const mb = (bytes: number): string => (bytes / 1048576).toFixed(1);
