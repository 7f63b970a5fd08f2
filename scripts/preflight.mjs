#!/usr/bin/env node
// The system dependencies the tests need, checked in about a second before `npm test` spends minutes
// in lint, typecheck and suites: the tests start their own redis-server (so the binary must be on
// PATH), and the session wire is proved by a Python client that imports msgpack and by the C# client,
// compiled with mcs and run with mono; the State Store tests need a PostgreSQL server that answers.
//
//   node scripts/preflight.mjs             one line when all is there; otherwise names what is missing
//                                          and the one command that installs it, and exits 1
//   node scripts/preflight.mjs --packages  the Debian packages of what is missing, one a line
//                                          (what scripts/setup.sh installs)
//
// ZLINK_PYTHON names the interpreter to use instead of looking (the Python session test honours it too);
// ZLINK_POSTGRES_URL the PostgreSQL (default postgres://postgres@127.0.0.1:5432/test, as the tests).
// What is checked, and the install command, are scripts/system-deps.mjs's.
import { CHECKS, howToInstall } from './system-deps.mjs';

// The checks that wait on a server (PostgreSQL) run side by side with the rest.
const whys = await Promise.all(CHECKS.map((check) => check.missing()));
const missing = CHECKS.map((check, i) => ({ ...check, why: whys[i] })).filter((check) => check.why);

if (process.argv.includes('--packages')) {
  for (const { debian } of missing) console.log(debian);
} else if (missing.length === 0) {
  console.log(`preflight: ${CHECKS.map((c) => c.what).join(', ')}: found`);
} else {
  console.error('npm test needs what is missing here:');
  for (const { what, why } of missing) console.error(`  - ${what}: ${why}`);
  console.error(howToInstall(missing.map((m) => m.debian)));
  process.exit(1);
}
