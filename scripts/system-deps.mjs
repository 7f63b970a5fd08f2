// The system dependencies the demo and the tests need, and the one command that installs them: what
// scripts/preflight.mjs checks, what the demo's private redis-server needs, which interpreter the
// Python session test runs, the C# compiler and runtime the C# session test uses, which Chromium the
// browser test drives, the HAProxy the client-address test puts in front of a gateway, and the PostgreSQL
// server the State Store tests use. One module, so they never disagree on a name or a command.
import { Buffer } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { URL } from 'node:url';

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

/** Where the tests find PostgreSQL when ZLINK_POSTGRES_URL names none: what scripts/setup.sh makes. */
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The PostgreSQL the State Store tests use (each on tables of its own, dropped after): ZLINK_POSTGRES_URL
 * when set, else the local server's `test` database as `postgres`, over TCP, without a password.
 *
 * @returns {string}
 */
export function postgresUrl() {
  return process.env.ZLINK_POSTGRES_URL || DEFAULT_POSTGRES_URL;
}

/**
 * Why the PostgreSQL at `url` does not let the tests in, or undefined when it does. Opens a connection,
 * sends the startup message (protocol 3.0) for the URL's user and database and reads the first answer:
 * in when the server accepts without a password (or asks for one the URL carries); otherwise the refused
 * connection, the silence, the password asked for or the server's own error (a database that does not
 * exist). Never rejects.
 *
 * @param {string} url
 * @param {number} timeoutMs
 * @returns {Promise<string | undefined>}
 */
export function postgresProblem(url = postgresUrl(), timeoutMs = 3000) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return Promise.resolve(`${url} is not a postgres:// URL`);
  }
  const withPassword = u.password !== '';
  u.password = '';
  const shown = u.href;
  const user = decodeURIComponent(u.username) || 'postgres';
  const database = decodeURIComponent(u.pathname.slice(1)) || user;
  const body = Buffer.from(`\0\0\0\0\0\x03\0\0user\0${user}\0database\0${database}\0\0`, 'utf8');
  body.writeInt32BE(body.length, 0);
  return new Promise((resolve) => {
    const socket = connect(Number(u.port || 5432), u.hostname || '127.0.0.1');
    const done = (/** @type {string | undefined} */ why) => {
      clearTimeout(timer);
      // A Terminate message: the server logs no "unexpected EOF" for the probe.
      socket.end(Buffer.from([0x58, 0, 0, 0, 4]));
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(`${shown} did not answer within ${timeoutMs} ms`), timeoutMs);
    socket.on('error', (/** @type {NodeJS.ErrnoException} */ e) => done(`${shown}: ${e.code ?? e.message}`));
    socket.on('connect', () => socket.write(body));
    let got = Buffer.alloc(0);
    socket.on('data', (/** @type {Buffer} */ chunk) => {
      got = Buffer.concat([got, chunk]);
      // Messages: a type byte, then a length (itself included) and the body. The database and the role are
      // checked after authentication: in only at ReadyForQuery.
      while (got.length >= 5 && got.length >= 1 + got.readInt32BE(1)) {
        const [type, body] = [got[0], got.subarray(5, 1 + got.readInt32BE(1))];
        got = got.subarray(1 + got.readInt32BE(1));
        if (type === 0x5a /* Z */) return done(undefined);
        if (type === 0x52 /* R */ && body.readInt32BE(0) !== 0)
          return done(withPassword ? undefined : `${shown} asks for a password the URL does not carry`);
        if (type === 0x45 /* E */) {
          // Fields: a type byte and a NUL-ended text each; M is the message.
          const fields = body.toString('utf8').split('\0');
          return done(`${shown} refused the tests: ${fields.find((f) => f.startsWith('M'))?.slice(1)}`);
        }
      }
    });
  });
}

/** @typedef {string | undefined} Why why something is missing, or undefined when it is there */

/**
 * What the tests need: each with its Debian package and `missing()`, which says why it is missing or
 * returns undefined when it is there (at once, or once a server answered).
 *
 * @type {readonly { what: string, debian: string, missing: () => Why | Promise<Why> }[]}
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
  {
    what: 'PostgreSQL',
    debian: 'postgresql',
    missing: async () => {
      const why = await postgresProblem();
      if (why === undefined) return undefined;
      const fix = process.env.ZLINK_POSTGRES_URL
        ? 'ZLINK_POSTGRES_URL names it'
        : `scripts/setup.sh installs and starts Debian's, with a database test that postgres may use from 127.0.0.1 without a password; ZLINK_POSTGRES_URL names another`;
      return `${why} (the State Store tests need a PostgreSQL server: ${fix})`;
    },
  },
];
