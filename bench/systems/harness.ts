import { isDeepStrictEqual } from 'node:util';
import { PAYLOAD } from '../workload/payload.js';
import { type BenchMessage, type RunCommand, emit, fail, onCommands } from '../workload/protocol.js';
import { type BenchTarget, type Workable, runWorkload } from '../workload/workloads.js';
import { startCost, stopCost } from './call-cost.js';
import { startProfile, stopProfile } from './profiler.js';

/** A close that hangs must not keep a child alive. */
const CLOSE_GRACE_MS = 3000;

export interface StartedServer {
  /** `tcp://127.0.0.1:<port>`: where the client connects. */
  readonly endpoint: string;
  close(): Promise<void>;
}

/** A server's own commands beside the harness's: `true` when it took `command`. */
export type ServerCommands = (command: BenchMessage) => Promise<boolean>;

/**
 * The body of a server process: start, report `{type:'ready', endpoint}` on stdout, serve until
 * the runner sends `shutdown` or stdin ends, then exit. Profiles on `profile-start` / `profile-stop`;
 * any other command goes to `commands`.
 */
export function serverProcess(start: () => Promise<StartedServer>, commands?: ServerCommands): void {
  start()
    .then((server) => {
      const stop = async (): Promise<void> => {
        setTimeout(() => process.exit(0), CLOSE_GRACE_MS).unref();
        await server.close();
        process.exit(0);
      };
      onCommands(async (command) => {
        if (command.type === 'shutdown') await stop();
        else if (!(await profileCommand(command)) && !(await commands?.(command)))
          throw new Error(`unknown command ${command.type}`);
      }, stop);
      emit({ type: 'ready', endpoint: server.endpoint, pid: process.pid });
    })
    .catch(fail);
}

/**
 * `profile-start {kind}` → `{type:'profiling'}`; `profile-stop {file}` → `{type:'profiled'}`;
 * `cost-start` → `{type:'costing'}`; `cost-stop` → `{type:'cost', cost}` (call-cost.ts).
 */
async function profileCommand(command: BenchMessage): Promise<boolean> {
  if (command.type === 'cost-start') {
    startCost();
    emit({ type: 'costing' });
  } else if (command.type === 'cost-stop') {
    emit({ type: 'cost', cost: stopCost() });
  } else if (command.type === 'profile-start') {
    await startProfile(command.kind === 'alloc' ? 'alloc' : 'cpu');
    emit({ type: 'profiling' });
  } else if (command.type === 'profile-stop') {
    await stopProfile(String(command.file));
    emit({ type: 'profiled', file: command.file });
  } else {
    return false;
  }
  return true;
}

/** The endpoint a client process was started for (env `BENCH_ENDPOINT`). */
export function benchEndpoint(): string {
  const endpoint = process.env.BENCH_ENDPOINT;
  if (!endpoint) throw new Error('missing env BENCH_ENDPOINT');
  return endpoint;
}

/**
 * The body of a client process: connect, check that an echo comes back equal and the server counts,
 * report `{type:'ready'}`, then run workloads on `run` commands (`{type:'result', result}`) until
 * `shutdown` or the end of stdin.
 */
export function clientProcess(connect: (endpoint: string) => Promise<BenchTarget>): void {
  targetsProcess(async () => {
    const target = await connect(benchEndpoint());
    return { targets: { [DEFAULT_TARGET]: target }, close: () => target.close() };
  });
}

/** What a client process with several targets offers: a `run` command names one in `target`. */
export interface BenchTargets {
  readonly targets: Readonly<Record<string, Workable>>;
  close(): Promise<void>;
}

/** The target a `run` command without `target` runs on. */
export const DEFAULT_TARGET = 'default';

/** As `clientProcess`, for a client whose targets share its processes (each checked the same way). */
export function targetsProcess(connect: () => Promise<BenchTargets>): void {
  const main = async (): Promise<void> => {
    const { targets, close } = await connect();
    for (const [name, target] of Object.entries(targets)) {
      const echoed = await target.request(PAYLOAD);
      if (!isDeepStrictEqual(echoed, PAYLOAD))
        throw new Error(`${name}: echo came back different: ${JSON.stringify(echoed)}`);
      const count = await target.count();
      if (typeof count !== 'number')
        throw new Error(`${name}: count is not a number: ${JSON.stringify(count)}`);
    }
    const stop = async (): Promise<void> => {
      setTimeout(() => process.exit(0), CLOSE_GRACE_MS).unref();
      await close();
      process.exit(0);
    };
    onCommands(async (command) => {
      if (command.type === 'run') {
        const run = command as unknown as RunCommand;
        const target = targets[run.target ?? DEFAULT_TARGET];
        if (!target) throw new Error(`no target '${String(run.target)}'`);
        emit({ type: 'result', result: await runWorkload(target, run) });
      } else if (command.type === 'shutdown') {
        await stop();
      } else if (!(await profileCommand(command))) {
        throw new Error(`unknown command ${command.type}`);
      }
    }, stop);
    emit({ type: 'ready', pid: process.pid });
  };
  main().catch(fail);
}
