import { describe, expect, it } from '@jest/globals';
import {
  type Versioned,
  type RelocationRecord,
  followUntil,
  parseAuthorityRecord,
  parseObjectKey,
  parseRelocationRecord,
} from '../../../../lib/core/index.js';

/** Object-store records read back from a shared store are checked field by field (issue 15 item 1). */
const authority = {
  type: 'room',
  state: 'ready',
  owner: { rid: 'node-a', nodeGeneration: 'g1' },
  objectGeneration: 1,
  authorityOwnerGeneration: 0,
  ownerLeaseGeneration: 7,
};

const end = (rid: string) => ({
  rid,
  nodeGeneration: 'g1',
  authorityOwnerGeneration: 1,
  ownerLeaseGeneration: 2,
});
const relocation = {
  relocationId: 'move-1',
  type: 'room',
  state: 'committed',
  objectGeneration: 3,
  source: end('node-a'),
  target: end('node-b'),
  followMs: 30000,
};

describe('parseAuthorityRecord', () => {
  it('accepts every state with its fields, and keeps only the fields it knows', () => {
    for (const state of ['creating', 'ready', 'releasing']) {
      expect(parseAuthorityRecord({ ...authority, state })).toEqual({ ...authority, state });
    }
    const extra = { ...authority, lease: 5, owner: { ...authority.owner, endpoint: 'x' } };
    expect(parseAuthorityRecord(extra)).toEqual(authority);
  });

  it.each([
    ['not an object', 'x'],
    ['an array', [authority]],
    ['an unknown state', { ...authority, state: 'gone' }],
    ['an empty type', { ...authority, type: '' }],
    ['no owner', { ...authority, owner: undefined }],
    ['an owner without a generation', { ...authority, owner: { rid: 'node-a' } }],
    ['an owner with an empty rid', { ...authority, owner: { rid: '', nodeGeneration: 'g' } }],
    ['a fractional ObjectGeneration', { ...authority, objectGeneration: 1.5 }],
    ['a negative AuthorityOwnerGeneration', { ...authority, authorityOwnerGeneration: -1 }],
    ['a string OwnerLeaseGeneration', { ...authority, ownerLeaseGeneration: '7' }],
    ['an unsafe integer generation', { ...authority, objectGeneration: 2 ** 53 }],
  ])('refuses %s', (_what, value) => {
    expect(parseAuthorityRecord(value)).toBeUndefined();
  });
});

describe('parseRelocationRecord', () => {
  it('accepts every state with its fields', () => {
    for (const state of ['preparing', 'committed', 'aborted']) {
      expect(parseRelocationRecord({ ...relocation, state })).toEqual({ ...relocation, state });
    }
    expect(parseRelocationRecord({ ...relocation, followMs: 0 })).toEqual({ ...relocation, followMs: 0 });
  });

  it.each([
    ['not an object', null],
    ['an unknown state', { ...relocation, state: 'moving' }],
    ['no relocation id', { ...relocation, relocationId: undefined }],
    ['no target', { ...relocation, target: undefined }],
    ['a source without fences', { ...relocation, source: { rid: 'a', nodeGeneration: 'g' } }],
    ['a negative follow duration', { ...relocation, followMs: -1 }],
    ['a fractional ObjectGeneration', { ...relocation, objectGeneration: 0.5 }],
  ])('refuses %s', (_what, value) => {
    expect(parseRelocationRecord(value)).toBeUndefined();
  });
});

describe('parseObjectKey', () => {
  it('accepts a spot or actor key with non-empty names, braces and colons included', () => {
    expect(parseObjectKey({ mesh: 'm', kind: 'spot', id: 'a:{b}' })).toEqual({
      mesh: 'm',
      kind: 'spot',
      id: 'a:{b}',
    });
    expect(parseObjectKey({ mesh: 'm', kind: 'actor', id: 'p' })).toEqual({
      mesh: 'm',
      kind: 'actor',
      id: 'p',
    });
  });

  it.each([
    ['an unknown kind', { mesh: 'm', kind: 'queue', id: 'x' }],
    ['an empty id', { mesh: 'm', kind: 'spot', id: '' }],
    ['no mesh', { kind: 'spot', id: 'x' }],
  ])('refuses %s', (_what, value) => {
    expect(parseObjectKey(value)).toBeUndefined();
  });
});

describe('followUntil', () => {
  const stored = (record: RelocationRecord): Versioned<RelocationRecord> => ({
    key: { mesh: 'm', kind: 'spot', id: 'r' },
    record,
    version: 4,
    writtenAt: 1000,
    readAt: 1500,
  });
  const committed = parseRelocationRecord(relocation)!;

  it('is the commit time plus the follow duration, by the store clock', () => {
    expect(followUntil(stored(committed))).toBe(31000);
  });

  it('is undefined before the commit, after an abort, and with Message Follow off', () => {
    expect(followUntil(stored({ ...committed, state: 'preparing' }))).toBeUndefined();
    expect(followUntil(stored({ ...committed, state: 'aborted' }))).toBeUndefined();
    expect(followUntil(stored({ ...committed, followMs: 0 }))).toBeUndefined();
  });
});
