/**
 * `npm run demo`: two billing servers (weights 100 and 300) and a client, three processes over
 * real zeromq (ClientServer). Shows the 1:3 split, then drains the heavier server and shows the rest
 * going to the other one. Then three game nodes on one RouteMesh (see `../game-mesh/mesh-demo.ts`),
 * and one fanout publisher with a fast and a slow subscriber (see `../system-events/fanout-demo.ts`).
 * Stops everything it started.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { meshDemo } from '../game-mesh/mesh-demo.js';
import { fanoutDemo } from '../system-events/fanout-demo.js';

const here = dirname(fileURLToPath(import.meta.url));
const children: ChildProcess[] = [];

function start(script: string, args: string[]): ChildProcess {
  const child = spawn(process.execPath, [join(here, script), ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  return child;
}

async function firstLine(child: ChildProcess): Promise<Record<string, any>> {
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  return JSON.parse(line) as Record<string, any>;
}

async function runClient(
  requests: number,
  minReady: number,
  endpoints: string[],
): Promise<Record<string, any>> {
  const client = start('billing-client.js', [String(requests), String(minReady), ...endpoints]);
  const result = await firstLine(client);
  await once(client, 'exit');
  return result;
}

try {
  const a = start('billing-server.js', ['billing-a', '100']);
  const b = start('billing-server.js', ['billing-b', '300']);
  const [infoA, infoB] = await Promise.all([firstLine(a), firstLine(b)]);
  console.log(
    `servers: billing-a (weight 100) at ${infoA.endpoint}, billing-b (weight 300) at ${infoB.endpoint}`,
  );

  const first = await runClient(4000, 2, [infoA.endpoint, infoB.endpoint]);
  const ratio = (first.counts['billing-b'] ?? 0) / Math.max(1, first.counts['billing-a'] ?? 0);
  console.log(
    `4000 requests in ${first.seconds} s: ${JSON.stringify(first.counts)} → ratio b:a = ${ratio.toFixed(2)} (weights 300:100)`,
  );

  b.kill('SIGUSR2');
  console.log('billing-b drains: it stops taking new calls, finishes what it accepted, closes its listener');
  await new Promise((r) => setTimeout(r, 300));
  const second = await runClient(1000, 1, [infoA.endpoint, infoB.endpoint]);
  console.log(
    `1000 more requests, client still configured with both: ${JSON.stringify(second.counts)} failures ${JSON.stringify(second.failures)}`,
  );
  await meshDemo(start);
  await fanoutDemo(start);
} finally {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(
    children.map((c) => (c.exitCode === null && c.signalCode === null ? once(c, 'exit') : undefined)),
  );
  console.log('demo finished; every process it started has stopped');
}
