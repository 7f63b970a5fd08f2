/**
 * `nestjs-zlink records` argument checks (issue 51): refused with exit code 2 and a message naming
 * the flag, before any connection is made. The command against a real Redis is in
 * test/e2e/store-records.spec.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { recordsCommand } from '../../../lib/runtime/records-command.js';

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
});
