/**
 * Nest microservice style over ZLink, as two processes: the orders microservice (`ZLinkServer`,
 * `@MessagePattern`) and a caller using `ClientsModule` + `ZLinkClientProxy`.
 * Run on its own: node .sample-build/sample/microservice/microservice-demo.js
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LineChild, type Start, booting } from '../demo-child.js';

/**
 * Starts the orders service at once, so that it boots while the parts before this one run; `run()`
 * then starts the caller and prints what each of its calls got.
 */
export function startMicroservice(start: Start): { run(): Promise<void> } {
  // Paths relative to a sibling sample folder, as the other demos start their processes.
  const service = new LineChild('orders-service', start('../microservice/orders-service.js', []));
  const ready = booting(service.next());
  return {
    run: async () => {
      const { endpoint } = await ready;
      console.log(`microservice: orders-service (ZLinkServer, @MessagePattern) at ${endpoint as string}`);
      const caller = new LineChild('orders-client', start('../microservice/orders-client.js', [endpoint]));
      for (let line = await caller.next(); line.type !== 'done'; line = await caller.next()) {
        const { type, ...rest } = line;
        console.log(`  [ClientsModule → ZLinkClientProxy] ${String(type)}: ${JSON.stringify(rest)}`);
      }
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const here = dirname(fileURLToPath(import.meta.url));
  const children: ChildProcess[] = [];
  const start: Start = (script, args) => {
    const child = spawn(process.execPath, [join(here, script), ...args], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.push(child);
    return child;
  };
  try {
    await startMicroservice(start).run();
  } finally {
    // Closing stdin ends each sample process (exitWithParent); wait for them, a bounded while.
    const exits = children
      .filter((child) => child.exitCode === null && child.signalCode === null)
      .map((child) => new Promise((resolve) => child.once('exit', resolve)));
    for (const child of children) child.stdin?.end();
    const bound = setTimeout(() => children.forEach((child) => child.kill()), 5000);
    await Promise.all(exits);
    clearTimeout(bound);
  }
}
