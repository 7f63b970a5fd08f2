#!/usr/bin/env node
// The system dependencies the tests need, checked in about a second before `npm test` spends minutes
// in lint, typecheck and suites: the tests start their own redis-server (so the binary must be on
// PATH), and the session wire is proved by a Python client that imports msgpack.
//
//   node scripts/preflight.mjs             one line when all is there; otherwise names what is missing
//                                          and the one command that installs it, and exits 1
//   node scripts/preflight.mjs --packages  the Debian packages of what is missing, one a line
//                                          (what scripts/setup.sh installs)
//
// ZLINK_PYTHON names the interpreter to use instead of looking (the Python session test honours it too).
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The first executable `name` on PATH, or undefined. */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/**
 * The interpreters test/e2e/sessions-python-client.spec.ts tries, in its order: Debian's
 * /usr/bin/python3 first (where python3-msgpack installs; a PATH python3 may be a pyenv shim or a
 * venv without it), then python3 on PATH.
 */
function pythons() {
  if (process.env.ZLINK_PYTHON) return [process.env.ZLINK_PYTHON];
  return ['/usr/bin/python3', 'python3'].filter((c) => !c.startsWith('/') || existsSync(c));
}

const checks = [
  {
    what: 'redis-server',
    debian: 'redis-server',
    missing: () =>
      onPath('redis-server') ? undefined : 'not on PATH (each test that needs Redis starts its own)',
  },
  {
    what: 'python3 with msgpack',
    debian: 'python3-msgpack',
    missing: () => {
      const tried = pythons();
      const ok = tried.some(
        (python) =>
          spawnSync(python, ['-c', 'import msgpack'], { stdio: 'ignore', timeout: 10000 }).status === 0,
      );
      return ok
        ? undefined
        : `${tried.join(' and ') || 'no python3'} cannot import msgpack (the Python session client needs it)`;
    },
  },
];

const missing = checks.map((check) => ({ ...check, why: check.missing() })).filter((check) => check.why);

if (process.argv.includes('--packages')) {
  for (const { debian } of missing) console.log(debian);
} else if (missing.length === 0) {
  console.log(`preflight: ${checks.map((c) => c.what).join(', ')}: found`);
} else {
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  console.error('npm test needs what is missing here:');
  for (const { what, why } of missing) console.error(`  - ${what}: ${why}`);
  console.error(`Install it with: ${sudo}apt-get install -y ${missing.map((m) => m.debian).join(' ')}`);
  console.error('(Debian/Ubuntu; scripts/setup.sh does the same, then npm ci)');
  process.exit(1);
}
