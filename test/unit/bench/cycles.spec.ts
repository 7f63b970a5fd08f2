import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { importCycles, readLibFiles } from '../architecture-rules.js';

/**
 * bench/ is run by hand and read by whoever changes a figure: its modules import one way, from the
 * runner down to the report's parts, so a report section can be read without its runner.
 */

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

describe('bench/ imports', () => {
  const files = readLibFiles(repoRoot, 'bench');

  it('the scan sees the bench tree', () => {
    const paths = files.map((f) => f.path);
    expect(paths).toContain('bench/run.ts');
    expect(paths).toContain('bench/report.ts');
    expect(paths).toContain('bench/systems/harness.ts');
  });

  it('bench/** has no import cycles', () => {
    expect(importCycles(files)).toEqual([]);
  });
});
