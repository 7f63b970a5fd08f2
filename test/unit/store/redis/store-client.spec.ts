/**
 * How a Redis store names where it points in its messages (`redisTarget`, issue 51): never a secret,
 * whether the password is in the URL's authority or in a query parameter ioredis reads as one.
 */
import { describe, expect, it } from '@jest/globals';
import { redisTarget } from '../../../../lib/store/redis/store-client.js';

describe('redisTarget', () => {
  it.each<[string, string, string]>([
    ['a password in the authority', 'redis://:s3cret@h:6379/0', 'redis://h:6379/0'],
    ['a ?password= parameter', 'redis://h:6379?password=s3cret', 'redis://h:6379'],
    [
      'pass-like parameters among others',
      'rediss://user@h:6380/2?db=2&sentinelPassword=s3cret&PASS=s3cret&family=4',
      'rediss://user@h:6380/2?db=2&family=4',
    ],
  ])('%s: left out', (_what, url, named) => {
    const target = redisTarget({ redis: url });
    expect(target).toBe(named);
    expect(target).not.toContain('s3cret');
  });
});
