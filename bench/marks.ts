/**
 * Marks around a measured span for a driver that reads a counter exactly around it
 * (bench/instructions.ts zeroes callgrind's counts at `measure:start` and reads them at `measure:end`).
 */

/**
 * Prints `line` and resolves once the driver answers with a line on stdin. `last`: the driver's pipe is
 * let go after the answer (it would keep this process alive).
 */
export function mark(line: string, options: { last?: boolean } = {}): Promise<void> {
  return new Promise((resolve) => {
    process.stdin.once('data', () => {
      if (options.last) process.stdin.destroy();
      else process.stdin.pause();
      resolve();
    });
    process.stdin.resume();
    process.stdout.write(`${line}\n`);
  });
}
