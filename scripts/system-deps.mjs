// The system dependencies the demo and the tests need, and the one command that installs them: what
// scripts/preflight.mjs checks, what the demo's private redis-server needs, which interpreter the
// Python session test runs, the C# compiler and runtime the C# session test uses, which Chromium the
// browser test drives, and the HAProxy the client-address test puts in front of a gateway. One module,
// so they never disagree on a name or a command.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The one command that installs every missing package and then the npm dependencies. */
export const SETUP_COMMAND = 'scripts/setup.sh';

/**
 * How to install the Debian `packages` named, as the lines of a message: the one command first, then
 * the package names for a system where it does not apply.
 *
 * @param {readonly string[]} packages Debian package names, e.g. `['redis-server']`.
 * @returns {string}
 */
export function howToInstall(packages) {
  const names = packages.join(' ');
  return (
    `Install it with: ${SETUP_COMMAND}\n` +
    `  (Debian/Ubuntu: apt-get install -y ${names}, after apt-get update when the lists lack it, with sudo\n` +
    `  when not root; then npm ci. On another system install ${names} with its package manager.)`
  );
}

/**
 * Whether `path` is a file this process may execute.
 *
 * @param {string} path
 * @returns {boolean}
 */
function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The first executable `name` on PATH, or undefined.
 *
 * @param {string} name
 * @returns {string | undefined}
 */
export function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * The interpreters to try for the Python session client, in order: ZLINK_PYTHON alone when set;
 * otherwise Debian's /usr/bin/python3 first (where python3-msgpack installs; a PATH python3 may be a
 * pyenv shim or a venv without it), then python3 on PATH.
 *
 * @returns {string[]}
 */
export function pythons() {
  if (process.env.ZLINK_PYTHON) return [process.env.ZLINK_PYTHON];
  return ['/usr/bin/python3', 'python3'].filter((c) => !c.startsWith('/') || existsSync(c));
}

/**
 * The first of `pythons()` that can `import msgpack`, or undefined.
 *
 * @returns {string | undefined}
 */
export function pythonWithMsgpack() {
  return pythons().find(
    (python) => spawnSync(python, ['-c', 'import msgpack'], { stdio: 'ignore', timeout: 10000 }).status === 0,
  );
}

/**
 * The Chromium the browser session test drives with playwright-core: Debian's (no browser is
 * downloaded), or ZLINK_CHROMIUM when set.
 *
 * @returns {string}
 */
export function chromium() {
  return process.env.ZLINK_CHROMIUM || '/usr/bin/chromium';
}

/**
 * Debian's Mono C# compiler and runtime, which compile and run the C# session client in the tests
 * (`mono-mcs` brings `mono` with it), or undefined when either is missing.
 *
 * @returns {{ mcs: string, mono: string } | undefined}
 */
export function csharpTools() {
  const mcs = onPath('mcs');
  const mono = onPath('mono');
  return mcs && mono ? { mcs, mono } : undefined;
}

/**
 * The HAProxy the client-address test puts in front of a gateway (a real load balancer writing the
 * PROXY header): ZLINK_HAPROXY when set (as ZLINK_PYTHON names a python), else `haproxy` on PATH, else
 * Debian's /usr/sbin/haproxy (a user's PATH may lack /usr/sbin); undefined when there is none.
 *
 * @returns {string | undefined}
 */
export function haproxyBinary() {
  const named = process.env.ZLINK_HAPROXY;
  if (named) return existsSync(named) ? named : undefined;
  return onPath('haproxy') ?? (existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : undefined);
}

/**
 * What the tests need: each with its Debian package and `missing()`, which says why it is missing or
 * returns undefined when it is there.
 *
 * @type {readonly { what: string, debian: string, missing: () => string | undefined }[]}
 */
export const CHECKS = [
  {
    what: 'redis-server',
    debian: 'redis-server',
    missing: () =>
      onPath('redis-server') ? undefined : 'not on PATH (each test that needs Redis starts its own)',
  },
  {
    what: 'python3 with msgpack',
    debian: 'python3-msgpack',
    missing: () =>
      pythonWithMsgpack()
        ? undefined
        : `${pythons().join(' and ') || 'no python3'} cannot import msgpack (the Python session client needs it)`,
  },
  {
    what: 'chromium',
    debian: 'chromium',
    missing: () =>
      executable(chromium())
        ? undefined
        : `${chromium()} is not there (the browser session client test drives it; no browser is downloaded)`,
  },
  {
    what: 'mcs and mono',
    debian: 'mono-mcs',
    missing: () =>
      csharpTools()
        ? undefined
        : 'not on PATH (the C# session client, clients/csharp/ZLinkSession, is compiled with mcs and run with mono in the tests)',
  },
  {
    what: 'haproxy',
    debian: 'haproxy',
    missing: () => {
      if (haproxyBinary()) return undefined;
      const where = process.env.ZLINK_HAPROXY
        ? `${process.env.ZLINK_HAPROXY} is not there`
        : 'not on PATH nor in /usr/sbin';
      return `${where} (a real HAProxy stands in front of a gateway in the client-address test)`;
    },
  },
];
