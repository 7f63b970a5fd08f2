import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { main } from '../../../examples/objects/saved-players.js';

/**
 * The durable objects example of docs/objects.md runs as written: a player saved after every turn on
 * one object server comes back, restored, on the next one after the first stopped.
 */
afterEach(() => {
  jest.restoreAllMocks();
});

describe('examples/objects/saved-players.ts', () => {
  it('runs: the player comes back where it was, told it was restored', async () => {
    const lines: string[] = [];
    jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    await main();
    expect(lines).toEqual([
      'ann on game-1: new, at x = 0',
      'ann on game-2: restored from version 6, at x = 12',
      'ann after the restart: x = 12, shielded = true',
    ]);
  });
});
