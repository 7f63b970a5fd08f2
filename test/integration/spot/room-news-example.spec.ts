import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { main } from '../../../examples/objects/room-news.js';

/**
 * The Logical Multicast example of docs/objects.md runs as written: an arena's milestone, published
 * from its handler, and the gateway's notice reach the lobbies on both object servers, one record to
 * the other server and none back to the publisher's own.
 */
afterEach(() => {
  jest.restoreAllMocks();
});

describe('examples/objects/room-news.ts', () => {
  it('runs: both lobbies get the milestone and the notice', async () => {
    const lines: string[] = [];
    jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    await main();
    expect(lines).toEqual([
      'lobby-1: ann won 1 in arena-1 (published on news-1) | notice: servers restart at 04:00',
      'lobby-2: ann won 1 in arena-1 (published on news-1) | notice: servers restart at 04:00',
      'news-1 milestone: 1 published, 1 record(s) sent, 1 delivered here',
    ]);
  });
});
