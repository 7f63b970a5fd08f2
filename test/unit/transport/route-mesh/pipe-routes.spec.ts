import { describe, expect, it } from '@jest/globals';
import { PipeRoutes, pipeKey } from '../../../../lib/transport/route-mesh/pipe-routes.js';
import type { PeerRoute } from '../../../../lib/transport/route-mesh/peer-host.js';

const route = (name: string): PeerRoute => ({ key: name }) as unknown as PeerRoute;

describe('PipeRoutes: the route behind a pipe, the last one asked for kept until a change', () => {
  it('answers by the pipe’s bytes, and the same Buffer asked again after a set or a delete gets the new answer', () => {
    const routes = new PipeRoutes();
    const pipe = Buffer.from('zAbC', 'latin1');
    const a = route('a');
    expect(routes.of(pipe)).toBeUndefined();
    routes.set(pipeKey(pipe), a);
    // The same Buffer as before the set: the kept answer (none) must not stand.
    expect(routes.of(pipe)).toBe(a);
    // Another Buffer with the same bytes: the same route.
    expect(routes.of(Buffer.from('zAbC', 'latin1'))).toBe(a);
    const b = route('b');
    routes.set(pipeKey(pipe), b);
    expect(routes.of(pipe)).toBe(b);
    routes.delete(pipeKey(pipe));
    expect(routes.of(pipe)).toBeUndefined();
    expect(routes.get(pipeKey(pipe))).toBeUndefined();
  });

  it('a new Buffer of the kept pipe’s bytes keeps its answer; other bytes, even one byte longer, are looked up', () => {
    const routes = new PipeRoutes();
    const [a, b, c] = [route('a'), route('b'), route('c')];
    routes.set(pipeKey(Buffer.from('zAbC', 'latin1')), a);
    routes.set(pipeKey(Buffer.from('zAbD', 'latin1')), b);
    routes.set(pipeKey(Buffer.from('zAbCx', 'latin1')), c);
    for (const [bytes, expected] of [
      ['zAbC', a],
      ['zAbC', a],
      ['zAbD', b],
      ['zAbC', a],
      ['zAbCx', c],
      ['zAb', undefined],
      ['zAbC', a],
    ] as const)
      expect(routes.of(Buffer.from(bytes, 'latin1'))).toBe(expected);
  });
});
