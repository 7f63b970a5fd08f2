/**
 * The benches' private redis-server (sample/private-redis.ts): `startPrivateRedis` is `undefined` only
 * when the binary is not on PATH, the one case a bench falls back from and names in its report. A
 * redis-server that is there but fails (exits, never answers) used to read as "none" too, so the store
 * parts ran against whatever answered on the standard port, or skipped, without a word. Each case runs
 * in a child process with its own PATH (spawn reads the real process's environment, not jest's copy).
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { runNode } from '../../helpers/run-node.js';
import { requirePrivateRedis } from '../../../sample/private-redis.js';

/** The compiled module (global setup builds sample/ with the fixtures). */
const MODULE = pathToFileURL(resolve(process.cwd(), '.fixtures-build/sample/private-redis.js')).href;
const root = mkdtempSync(join(tmpdir(), 'zlink-private-redis-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Prints what `startPrivateRedis()` gave, `undefined` or the error's message, as one JSON line. */
const probe = join(root, 'probe.mjs');
writeFileSync(
  probe,
  `import { startPrivateRedis } from ${JSON.stringify(MODULE)};\n` +
    `startPrivateRedis().then(\n` +
    `  async (redis) => { console.log(JSON.stringify({ started: redis !== undefined })); await redis?.stop(); },\n` +
    `  (error) => console.log(JSON.stringify({ rejected: error.message })),\n` +
    `);\n`,
);

/** A PATH directory holding a `redis-server` shell script with `body`, or none. */
function pathWith(name: string, body?: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  if (body !== undefined) {
    writeFileSync(join(dir, 'redis-server'), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, 'redis-server'), 0o755);
  }
  return dir;
}

async function start(path: string): Promise<unknown> {
  const run = await runNode(probe, [], { PATH: path }, 30000);
  expect([run.code, run.err]).toEqual([0, '']);
  return JSON.parse(run.out);
}

describe('startPrivateRedis', () => {
  it('starts one that answers when redis-server is on PATH (and stops it)', async () => {
    expect(await start(process.env.PATH ?? '')).toEqual({ started: true });
  });

  it('is undefined when redis-server is not on PATH', async () => {
    expect(await start(pathWith('none'))).toEqual({ started: false });
  });

  it('rejects, naming why, when redis-server is there but exits before it answers', async () => {
    const run = await start(pathWith('exits', 'echo "bad config" >&2\nexit 3'));
    expect(run).toEqual({
      rejected: expect.stringMatching(
        /^redis-server on port \d+ exited \(3\) before answering PING: bad config$/,
      ),
    });
  });

  it('keeps an append-only file when asked, in a folder of its own removed when it stops', async () => {
    const redis = await requirePrivateRedis({ appendfsync: 'everysec' });
    let dir = '';
    try {
      const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      const get = async (name: string) => ((await client.config('GET', name)) as string[])[1];
      const settings = [await get('appendonly'), await get('appendfsync')];
      dir = (await get('dir')) ?? '';
      await client.quit();
      expect(settings).toEqual(['yes', 'everysec']);
      expect(existsSync(dir)).toBe(true);
    } finally {
      await redis.stop();
    }
    expect(existsSync(dir)).toBe(false);
  });
});
