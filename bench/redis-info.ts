import type { Redis } from 'ioredis';

/** What Redis itself counts, read before and after a measured step (`INFO`). */
export interface RedisCounters {
  /** Commands run, every kind but INFO (the bench's own reads). */
  readonly commands: number;
  /** The same, by command name. */
  readonly byCommand: Readonly<Record<string, number>>;
  /** The server's CPU time, user + system, µs. */
  readonly cpuUs: number;
  /** Bytes of data and overhead Redis holds (`used_memory`). */
  readonly usedMemory: number;
}

const field = (info: string, name: string): number => {
  const match = new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info);
  return match ? Number(match[1]) : 0;
};

export async function redisCounters(redis: Redis): Promise<RedisCounters> {
  const [stats, cpu, memory] = await Promise.all([
    redis.info('commandstats'),
    redis.info('cpu'),
    redis.info('memory'),
  ]);
  let commands = 0;
  const byCommand: Record<string, number> = {};
  for (const [, name, calls] of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (name === 'info' || name === undefined) continue;
    commands += Number(calls);
    byCommand[name] = Number(calls);
  }
  return {
    commands,
    byCommand,
    cpuUs: (field(cpu, 'used_cpu_user') + field(cpu, 'used_cpu_sys')) * 1e6,
    usedMemory: field(memory, 'used_memory'),
  };
}

/** `after − before`, field by field. */
export function redisDelta(before: RedisCounters, after: RedisCounters): RedisCounters {
  const byCommand: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after.byCommand)) {
    const delta = calls - (before.byCommand[name] ?? 0);
    if (delta > 0) byCommand[name] = delta;
  }
  return {
    commands: after.commands - before.commands,
    byCommand,
    cpuUs: after.cpuUs - before.cpuUs,
    usedMemory: after.usedMemory - before.usedMemory,
  };
}

/**
 * `evalsha 3.0, hmget 3.0, …` per operation, most first, leaving out what ran less than once in
 * twenty operations (background traffic). Redis counts the commands a script runs as well.
 */
export function commandsPerOp(delta: RedisCounters, ops: number): string {
  if (ops <= 0) return '';
  return Object.entries(delta.byCommand)
    .filter(([, calls]) => calls / ops >= 0.05)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name, calls]) => `${name} ${(calls / ops).toFixed(1)}`)
    .join(', ');
}
