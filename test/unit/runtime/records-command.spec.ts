/**
 * `nestjs-zlink records` argument checks (issue 51): refused with exit code 2 and a message naming
 * the flag, before any record is read — a bad flag before any connection is made, a `--redis` that
 * is a Redis Cluster node (a real redis-server started with `--cluster-enabled yes`) on its first
 * answer. The command against a real Redis is in test/e2e/store-records.spec.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { recordsCommand } from '../../../lib/runtime/records-command.js';
import { RedisServer } from '../../helpers/redis-server.js';

describe('nestjs-zlink records arguments', () => {
  it.each<[string, string[], RegExp]>([
    ['no --redis', [], /--redis/],
    ['a --redis that is no redis:// URL', ['--redis', 'http://h:6379'], /--redis/],
    ['an unknown flag', ['--redis', 'redis://h', '--remove-all'], /--remove-all/],
  ])('%s: exit code 2', async (_what, args, message) => {
    const out = await recordsCommand(args);
    expect(out.code).toBe(2);
    expect(out.text).toMatch(message);
  });

  describe('a --redis that is a Redis Cluster node', () => {
    let node: RedisServer;
    beforeAll(async () => {
      node = await RedisServer.startClusterNode();
    });
    afterAll(() => node?.close());

    it.each([[[]], [['--remove-stale']]])('%j: refused with exit code 2, naming --redis', async (extra) => {
      const out = await recordsCommand(['--redis', node.url, ...extra]);
      expect(out.code).toBe(2);
      expect(out.text).toMatch(/^--redis: /);
      expect(out.text).toContain(`127.0.0.1:${node.port}`);
      expect(out.text).toContain('Redis Cluster');
    });
  });
});
