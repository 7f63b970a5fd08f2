// Child processes in e2e tests run compiled JavaScript (decorator metadata needs tsc, not a
// transpile-only loader), so compile lib/ and test/fixtures/ once before any suite runs.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

export default function globalSetup() {
  const require = createRequire(import.meta.url);
  const tsc = require.resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.fixtures.json'], { stdio: 'inherit' });
}
