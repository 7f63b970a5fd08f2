/**
 * `npm test` checks the system dependencies the tests need before it spends minutes in lint, typecheck
 * and suites (issue 51): without them it stops in seconds, naming what is missing and the one command
 * that installs it. A machine without python3-msgpack used to fail two tests five minutes in.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  accessSync,
  chmodSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { type Server, type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { howToInstall, SETUP_COMMAND } from '../../scripts/system-deps.mjs';
import { freePort } from '../helpers/index.js';
import { runNode } from '../helpers/run-node.js';

const PREFLIGHT = resolve(process.cwd(), 'scripts/preflight.mjs');
const root = mkdtempSync(join(tmpdir(), 'zlink-preflight-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A directory holding executable shell scripts `name → body`, to stand for a PATH or an interpreter. */
function bin(dir: string, scripts: Record<string, string>): string {
  const path = join(root, dir);
  mkdirSync(path, { recursive: true });
  for (const [name, body] of Object.entries(scripts)) {
    writeFileSync(join(path, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(path, name), 0o755);
  }
  return path;
}

const preflight = (env: NodeJS.ProcessEnv, args: string[] = []) => runNode(PREFLIGHT, args, env, 30000);

// A PATH without redis-server, and a python that cannot import msgpack: Debian's own without its
// site directories (-S), where python3-msgpack puts the module; or none at all where there is no such file.
// A Chromium that is not there, and one that is (any executable stands for it: nothing launches it).
const emptyPath = bin('empty', {});
const pythonWithoutMsgpack = join(bin('python', { python3: 'exec /usr/bin/python3 -S "$@"' }), 'python3');
const noChromium = join(root, 'no-such-chromium');
const aChromium = join(bin('chromium', { chromium: 'exit 0' }), 'chromium');
// An HAProxy that is not there (ZLINK_HAPROXY names it, so Debian's in /usr/sbin is not looked at), and
// one that is; mcs and mono are looked for on PATH.
const noHaproxy = join(root, 'no-such-haproxy');
const aHaproxy = join(bin('haproxy', { haproxy: 'exit 0' }), 'haproxy');
const MONO = { mcs: 'exit 0', mono: 'exit 0' };
const ALL_PACKAGES = ['redis-server', 'python3-msgpack', 'chromium', 'mono-mcs', 'haproxy', 'postgresql'];

/** A PostgreSQL message: its type, its length (itself included) and its body. */
function message(type: string, body: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length + 4);
  return Buffer.concat([Buffer.from(type), length, body]);
}
const int32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
/**
 * What a stand-in PostgreSQL answers a startup message with: `in` (authenticated, ready for queries),
 * `password` (asks for one, SASL), `no-database` (authenticated, then the error a missing database
 * gives), `silent` (nothing).
 */
const ANSWERS: Record<string, Buffer> = {
  in: Buffer.concat([message('R', int32(0)), message('Z', Buffer.from('I'))]),
  password: message('R', Buffer.concat([int32(10), Buffer.from('SCRAM-SHA-256\0\0')])),
  'no-database': Buffer.concat([
    message('R', int32(0)),
    message('E', Buffer.from('SFATAL\0C3D000\0Mdatabase "test" does not exist\0\0')),
  ]),
  silent: Buffer.alloc(0),
};
/** Every dependency there but PostgreSQL, whose URL each test sets. */
function allButPostgres(): NodeJS.ProcessEnv {
  const path = bin('all', { 'redis-server': 'exit 0', python3: 'exit 0', ...MONO });
  return {
    PATH: path,
    ZLINK_PYTHON: join(path, 'python3'),
    ZLINK_CHROMIUM: aChromium,
    ZLINK_HAPROXY: aHaproxy,
  };
}
const servers: Server[] = [];
const held = new Set<Socket>();
/** The URL of a stand-in PostgreSQL for each answer, and of a port nothing listens on. */
const postgres: Record<string, string> = {};
beforeAll(async () => {
  for (const [answer, bytes] of Object.entries(ANSWERS)) {
    const server = createServer((socket) => {
      held.add(socket);
      socket.on('error', () => undefined);
      socket.once('data', () => socket.write(bytes));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    postgres[answer] = `postgres://postgres@127.0.0.1:${(server.address() as { port: number }).port}/test`;
  }
  postgres.closed = `postgres://postgres@127.0.0.1:${await freePort()}/test`;
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('npm test preflight', () => {
  it('runs first in npm test', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.test.startsWith('node scripts/preflight.mjs && ')).toBe(true);
  });

  it('stops within seconds naming everything missing, and the one command that installs them', async () => {
    const run = await preflight({
      PATH: emptyPath,
      ZLINK_PYTHON: pythonWithoutMsgpack,
      ZLINK_CHROMIUM: noChromium,
      ZLINK_HAPROXY: noHaproxy,
      ZLINK_POSTGRES_URL: postgres.closed,
    });
    expect(run.code).toBe(1);
    expect(run.err).toContain('redis-server: not on PATH');
    expect(run.err).toContain(`python3 with msgpack: ${pythonWithoutMsgpack} cannot import msgpack`);
    expect(run.err).toContain(
      `chromium: ${noChromium} is not there (the browser session client test drives it`,
    );
    // The one command is scripts/setup.sh (apt-get update when needed, sudo only when not root): a bare
    // `apt-get install` fails where the package lists are empty, `sudo` where root has no sudo.
    expect(run.err).toContain('Install it with: scripts/setup.sh\n');
    expect(run.err).toContain('mcs and mono: not on PATH');
    expect(run.err).toContain('haproxy:');
    expect(run.err).toContain(`PostgreSQL: ${postgres.closed}: ECONNREFUSED (the State Store tests need`);
    expect(run.err).toContain(`apt-get install -y ${ALL_PACKAGES.join(' ')},`);
    expect(run.err).toContain(`${howToInstall(ALL_PACKAGES)}\n`);
    expect(run.ms).toBeLessThan(20000);
  });

  it('names only what is missing: redis-server on PATH, python without msgpack', async () => {
    const path = bin('redis-only', { 'redis-server': 'exit 0', ...MONO });
    const run = await preflight({
      PATH: path,
      ZLINK_PYTHON: pythonWithoutMsgpack,
      ZLINK_CHROMIUM: aChromium,
      ZLINK_HAPROXY: aHaproxy,
      ZLINK_POSTGRES_URL: postgres.in,
    });
    expect(run.code).toBe(1);
    expect(run.err).not.toContain('redis-server:');
    expect(run.err).not.toContain('chromium:');
    expect(run.err).toContain(`${howToInstall(['python3-msgpack'])}\n`);
  });

  it('names a command that is there to run, from the checkout', () => {
    expect(SETUP_COMMAND).toBe('scripts/setup.sh');
    expect(() => accessSync(SETUP_COMMAND, constants.X_OK)).not.toThrow();
  });

  it('--packages lists the Debian packages of what is missing, for scripts/setup.sh', async () => {
    const run = await preflight(
      {
        PATH: emptyPath,
        ZLINK_PYTHON: pythonWithoutMsgpack,
        ZLINK_CHROMIUM: noChromium,
        ZLINK_HAPROXY: noHaproxy,
        ZLINK_POSTGRES_URL: postgres.closed,
      },
      ['--packages'],
    );
    expect(run.code).toBe(0);
    expect(run.out).toBe(`${ALL_PACKAGES.join('\n')}\n`);
  });

  it('passes, in one line, when all are there', async () => {
    const env = { ...allButPostgres(), ZLINK_POSTGRES_URL: postgres.in };
    const run = await preflight(env);
    expect([run.code, run.out, run.err]).toEqual([
      0,
      'preflight: redis-server, python3 with msgpack, chromium, mcs and mono, haproxy, PostgreSQL: found\n',
      '',
    ]);
    const packages = await preflight(env, ['--packages']);
    expect(packages.out).toBe('');
  });

  it('names why a PostgreSQL does not let the tests in: a password, a missing database, silence', async () => {
    const env = allButPostgres();
    const why = async (answer: string) => {
      const run = await preflight({ ...env, ZLINK_POSTGRES_URL: postgres[answer] });
      expect([run.code, run.err]).toEqual([1, expect.stringContaining(`${howToInstall(['postgresql'])}\n`)]);
      return run.err.split('\n')[1];
    };
    expect(await why('password')).toBe(
      `  - PostgreSQL: ${postgres.password} asks for a password the URL does not carry (the State Store tests need a PostgreSQL server: ZLINK_POSTGRES_URL names it)`,
    );
    expect(await why('no-database')).toContain(
      `${postgres['no-database']} refused the tests: database "test" does not exist`,
    );
    expect(await why('silent')).toContain(`${postgres.silent} did not answer within 3000 ms`);
  });
});
