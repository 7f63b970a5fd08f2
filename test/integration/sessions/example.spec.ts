import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { main } from '../../../examples/sessions/game-gateway.js';

/**
 * The sessions example of docs/sessions.md runs as written: a player connects over TCP, logs in
 * (bound to its Actor, seated at a table), moves (relayed, answered, pushed), is dealt a card (the
 * table's one push to every seated player) and leaves (the Actor and the gateway hear it).
 */
afterEach(() => {
  jest.restoreAllMocks();
});

describe('examples/sessions/game-gateway.ts', () => {
  it('runs: login, a relayed move with its push, and the end heard on both sides', async () => {
    const lines: string[] = [];
    jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
    });
    await main();
    expect(lines).toEqual(
      expect.arrayContaining([
        'client: welcome, ada',
        'client: push moved {"player":"ada","x":3}',
        'client: move -> {"x":3}',
        'client: push dealt {"card":"ace"}',
        'client: deal -> 1',
        'gateway: ada left (normal)',
        expect.stringMatching(/^ada: session .* ended \(normal\)$/),
      ]),
    );
  });
});
