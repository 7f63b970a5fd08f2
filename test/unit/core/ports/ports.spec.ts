import { describe, expect, it } from '@jest/globals';
import { parseDescriptor } from '../../../../lib/core/index.js';

/** Descriptors read back from a shared store are checked field by field (issue 5 item 2). */
describe('parseDescriptor', () => {
  const base = { rid: 'r', generation: 'g', endpoint: 'tcp://h:1', revision: 1 };

  it('accepts each kind with its fields', () => {
    const server = { kind: 'server', channel: 'c', weight: 0, draining: true, ...base };
    const node = { kind: 'mesh-node', mesh: 'm', objectRole: 'none', memberships: [], ...base };
    const publisher = { kind: 'publisher', channel: 'c', ...base };
    expect(parseDescriptor(server)).toEqual(server);
    expect(parseDescriptor(node)).toEqual(node);
    expect(parseDescriptor(publisher)).toEqual(publisher);
  });

  it.each([
    ['not an object', 'x'],
    ['an unknown kind', { kind: 'queue', channel: 'c', ...base }],
    ['a weight out of range', { kind: 'server', channel: 'c', weight: 10001, draining: false, ...base }],
    ['a missing endpoint', { kind: 'publisher', channel: 'c', ...base, endpoint: undefined }],
    [
      'an endpoint zeromq refuses',
      { kind: 'publisher', channel: 'c', ...base, endpoint: 'tcp://bad host:1' },
    ],
    ['an endpoint that is no URL', { kind: 'publisher', channel: 'c', ...base, endpoint: 'garbage' }],
    ['a fractional revision', { kind: 'publisher', channel: 'c', ...base, revision: 1.5 }],
    [
      'a bad membership',
      { kind: 'mesh-node', mesh: 'm', objectRole: 'none', memberships: [{ channel: 'x' }], ...base },
    ],
    [
      'an unknown object role',
      { kind: 'mesh-node', mesh: 'm', objectRole: 'boss', memberships: [], ...base },
    ],
  ])('refuses %s', (_what, value) => {
    expect(parseDescriptor(value)).toBeUndefined();
  });
});
