/**
 * Every test file passes alone and in parallel (issue 51): `npm test` runs the package specs side by side
 * (`jest:heavy`), and `.ci/run`, after it, runs each package spec alone once, so CI proves both.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';

describe('.ci/run', () => {
  const ci = readFileSync('.ci/run', 'utf8');
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };

  it('runs the package specs side by side in npm test', () => {
    expect(pkg.scripts['jest:heavy']).toMatch(/&& npm run jest -- test\/package$/);
  });

  it('then runs each package spec alone, one jest run per file', () => {
    const loop = 'for spec in test/package/*.spec.ts; do\n  npm run jest -- "$spec"\ndone';
    expect(ci).toContain(loop);
    expect(ci.indexOf('\nnpm test\n')).toBeGreaterThan(0);
    expect(ci.indexOf(loop)).toBeGreaterThan(ci.indexOf('\nnpm test\n'));
    // The glob finds what the loop claims to cover.
    expect(readdirSync('test/package').filter((f) => f.endsWith('.spec.ts')).length).toBeGreaterThan(1);
  });
});
