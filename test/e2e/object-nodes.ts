/**
 * What the multi-process object suites share: a private redis-server, object-node children
 * (test/fixtures/e2e/object-node.app.ts) started and cleaned up together, and the checks read from
 * the children's own handler logs.
 */
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';
import { RedisServer } from '../helpers/redis-server.js';
import type { CallResult } from '../fixtures/e2e/object-node.app.js';

export type { CallResult };

const APP = 'e2e/object-node.app.js';

export interface ObjectRefOut {
  kind: 'spot';
  type: string;
  id: string;
  objectGeneration: number;
  mesh: string;
  rid: string;
}

/** A private redis-server and the object nodes of one suite; `close` ends every child, then Redis. */
export class ObjectCluster {
  readonly apps: ChildApp[] = [];

  private constructor(
    readonly redis: RedisServer,
    private readonly keyPrefix: string,
    private readonly appPath: string,
  ) {}

  /** `app`: the fixture its nodes run (the object-node app unless given), under the compiled fixtures. */
  static async start(keyPrefix: string, app = APP): Promise<ObjectCluster> {
    return new ObjectCluster(await RedisServer.start(), keyPrefix, app);
  }

  /** Starts one node and resolves once it is ready (its runtime started, its descriptor written). */
  async node(rid: string, role: 'server' | 'client', extra: Record<string, unknown> = {}): Promise<ChildApp> {
    const app = new ChildApp(rid, this.appPath, {
      rid,
      role,
      redisUrl: this.redis.url,
      keyPrefix: this.keyPrefix,
      ...extra,
    });
    this.apps.push(app);
    await app.next('ready', 30000);
    return app;
  }

  async close(): Promise<void> {
    for (const app of this.apps) {
      app.kill('SIGCONT');
      app.kill('SIGKILL');
    }
    await Promise.all(this.apps.map((app) => app.exited));
    await this.redis.stop();
  }
}

/** Sends `command` and resolves with its reply, typed as the fixture writes it. */
export async function ask<T>(
  app: ChildApp,
  command: ChildMessage,
  timeoutMs = 30000,
): Promise<ChildMessage & T> {
  return (await app.call(command, timeoutMs)) as ChildMessage & T;
}

/** Every call of a `calls` command with its terminal. */
export async function calls(
  app: ChildApp,
  command: Record<string, unknown>,
  timeoutMs = 60000,
): Promise<CallResult[]> {
  const reply = await ask<{ results: CallResult[] }>(app, { type: 'calls', ...command }, timeoutMs);
  return reply.results;
}

/**
 * Resolves once every log line `apps` wrote so far has reached the test: a live child answers a
 * `sync` (its stdout keeps order), a dead one has closed its stdout. Lines of one process may lag
 * behind a reply that came through another, so read logs only after this.
 */
export async function settle(apps: readonly ChildApp[]): Promise<void> {
  await Promise.all(
    apps.map(async (app) => {
      if (app.running) await app.call({ type: 'sync' }, 15000);
      else await app.closed;
    }),
  );
}

/** The log lines of kind `e` (optionally of one object id). */
export function lines(app: ChildApp, e: string, id?: string): ChildMessage[] {
  return app.logs.filter((m) => m.e === e && (id === undefined || m.id === id));
}

/** What the handler logs of some processes say went wrong with turns; every list is empty when all is well. */
export interface TurnReport {
  /** A handler entered for an object while another turn of that object had not exited. */
  overlaps: string[];
  /** A sender's calls to one object entered out of that sender's order (by incarnation). */
  outOfOrder: string[];
  /** An operation id entered more than once (on any process). */
  ranTwice: string[];
  /** Every operation id that entered, with the process and incarnation it ran on. */
  ran: Map<string, { rid: string; gen: number }>;
}

/**
 * Reads every `enter` / `exit` of `apps` (each process's log is in its own order; an object lives on
 * one process at a time, so one log holds all of an incarnation's turns).
 */
export function turnReport(apps: readonly ChildApp[]): TurnReport {
  const report: TurnReport = { overlaps: [], outOfOrder: [], ranTwice: [], ran: new Map() };
  for (const app of apps) {
    const inside = new Map<string, string>();
    const lastSeq = new Map<string, number>();
    for (const m of app.logs) {
      const object = `${String(m.id)}#${String(m.gen)}`;
      if (m.e === 'enter') {
        const op = String(m.op);
        const busy = inside.get(object);
        if (busy !== undefined)
          report.overlaps.push(`${app.name}: ${op} entered ${object} while ${busy} ran`);
        inside.set(object, op);
        if (report.ran.has(op)) report.ranTwice.push(op);
        report.ran.set(op, { rid: app.name, gen: m.gen as number });
        const order = `${object} from ${String(m.sender)}`;
        const last = lastSeq.get(order);
        const seq = m.seq as number;
        if (last !== undefined && seq <= last) report.outOfOrder.push(`${order}: seq ${seq} after ${last}`);
        lastSeq.set(order, seq);
      } else if (m.e === 'exit') {
        if (inside.get(object) === m.op) inside.delete(object);
      }
    }
  }
  return report;
}

/** Counts of `results` by outcome. */
export function outcomes(results: readonly CallResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) out[r.outcome] = (out[r.outcome] ?? 0) + 1;
  return out;
}
