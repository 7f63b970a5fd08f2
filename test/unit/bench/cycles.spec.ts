import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { folderCycles, importCycles, readLibFiles } from '../architecture-rules.js';

/**
 * bench/ is run by hand and read by whoever changes a figure: its modules import one way, from the
 * runner down to the report's parts, and from the child processes (systems/) down to what they share
 * with the runner (workload/), so a report section or a child can be read without the rest.
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

  it('bench/** has no folder cycles: the runner uses systems/ and workload/, systems/ uses workload/', () => {
    expect(folderCycles(files)).toEqual([]);
  });
});
