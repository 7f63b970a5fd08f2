/**
 * `npm ci` is quiet on every Node version package.json's `engines` declares (issue 51): no locked
 * package may exclude the lowest version of any range we declare, or npm prints EBADENGINE there (Node
 * 20 got three: @opentelemetry/core and context-async-hooks 3.x want >=22.15, file-type 22 wants >=22).
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The part of `semver` used here (a dependency of jest's; no types installed for it). */
interface Semver {
  Range: new (range: string) => { set: { value: string }[][] };
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
}
const semver = createRequire(import.meta.url)('semver') as Semver;

interface Locked {
  version?: string;
  engines?: { node?: string } | string[];
}

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, Locked> };

/** The lowest version of each `||` alternative of `range`: `^20.19.0 || >=22.12.0` → 20.19.0, 22.12.0. */
function lowestOfEach(range: string): string[] {
  return new semver.Range(range).set.map(
    (comparators) => semver.minVersion(comparators.map((c) => c.value).join(' '))!.version,
  );
}

describe('engines', () => {
  const lowest = lowestOfEach(pkg.engines.node);

  it('reads the lowest version of each range package.json declares', () => {
    expect(lowest.length).toBeGreaterThan(0);
    expect(lowestOfEach('^20.19.0 || >=22.12.0')).toEqual(['20.19.0', '22.12.0']);
  });

  it('declares what the package needs at run time, not what the dev tools want', () => {
    // 20.19 and 22.12 load ES modules with require() unflagged (Nest 12 ships ESM only). ESLint 10
    // wants ^22.13 on the 22 line; raising the published range for it would give an app on 22.12
    // EBADENGINE from nestjs-zlink, so the linters are pinned instead (docs/decisions.md).
    expect(pkg.engines.node).toBe('^20.19.0 || >=22.12.0');
  });

  it.each(lowest)('every locked package runs on Node %s (npm ci prints no EBADENGINE there)', (node) => {
    const excluding = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, locked]) => {
        const wants = !locked.engines || Array.isArray(locked.engines) ? undefined : locked.engines.node;
        return wants === undefined || semver.satisfies(node, wants)
          ? []
          : [`${path.replace(/^.*node_modules\//, '')}@${locked.version}: node ${wants}`];
      });
    expect(excluding).toEqual([]);
  });
});
