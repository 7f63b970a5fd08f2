// Child processes in e2e tests run compiled JavaScript (decorator metadata needs tsc, not a
// transpile-only loader), so compile lib/, test/fixtures/ and sample/ once before any suite runs.
// Type errors do not stop the run here: `npm run typecheck` reports them, and tsc still emits.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

export default function globalSetup() {
  const require = createRequire(import.meta.url);
  const tsc = require.resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.fixtures.json'], { encoding: 'utf8' });
  if (result.status !== 0) {
    console.warn(`fixture build reported problems (e2e tests may fail):\n${result.stdout}${result.stderr}`);
  }
}
