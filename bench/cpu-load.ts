import { readFileSync } from 'node:fs';

/**
 * How much CPU other processes took while the bench ran (Linux: /proc). The bench's own share is
 * the runner plus its reaped children (`cutime`/`cstime`), so read it after the children exited.
 */
export interface CpuLoad {
  /** Share of all cores busy during the run, %. */
  readonly machineBusyPercent: number;
  /** Share of all cores used by the runner and its children, %. */
  readonly benchPercent: number;
  /** The rest: other processes (and the kernel on their behalf), %. */
  readonly otherPercent: number;
}

interface Snapshot {
  readonly busy: number;
  readonly total: number;
  readonly own: number;
}

function snapshot(): Snapshot | undefined {
  try {
    const cpu = (readFileSync('/proc/stat', 'utf8').split('\n')[0] as string)
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0); // idle + iowait
    const total = cpu.slice(0, 8).reduce((s, v) => s + v, 0); // without guest time (counted in user)
    // Fields after the command name (which may hold spaces): utime is the 12th, cstime the 15th.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    const own = fields.slice(11, 15).reduce((s, v) => s + v, 0);
    return { busy: total - idle, total, own };
  } catch {
    return undefined;
  }
}

/** Starts measuring; the returned function ends it (`undefined` where /proc is missing). */
export function measureCpuLoad(): () => CpuLoad | undefined {
  const start = snapshot();
  return () => {
    const end = snapshot();
    if (!start || !end || end.total === start.total) return undefined;
    const total = end.total - start.total;
    const pct = (v: number) => Math.round((v / total) * 1000) / 10;
    const busy = end.busy - start.busy;
    const own = Math.min(busy, end.own - start.own);
    return { machineBusyPercent: pct(busy), benchPercent: pct(own), otherPercent: pct(busy - own) };
  };
}
