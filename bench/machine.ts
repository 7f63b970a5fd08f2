import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';

export interface MachineInfo {
  readonly date: string;
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly loadAverage: number[];
  readonly os: string;
  readonly node: string;
  readonly versions: Record<string, string>;
  /** The commit the lib was built from, and whether lib/ had uncommitted changes. */
  readonly git: { commit: string; libDirty: boolean } | undefined;
}

function packageVersion(name: string): string {
  try {
    const path = join(process.cwd(), 'node_modules', name, 'package.json');
    return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function gitInfo(): MachineInfo['git'] {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'lib'], { encoding: 'utf8' }).trim();
    return { commit, libDirty: dirty.length > 0 };
  } catch {
    return undefined;
  }
}

export function machineInfo(): MachineInfo {
  const cpu = cpus();
  return {
    date: new Date().toISOString(),
    cpuModel: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
    os: `${platform()} ${release()}`,
    node: process.version,
    versions: Object.fromEntries(
      ['zeromq', 'msgpackr', '@nestjs/core', '@nestjs/microservices', 'rxjs'].map((n) => [
        n,
        packageVersion(n),
      ]),
    ),
    git: gitInfo(),
  };
}
