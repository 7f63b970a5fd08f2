/**
 * The pure halves of the MeshLink over a MeshNode: what a ready peer looks like to the object layer,
 * and the up / changed / down events that take what the listeners were told to the ready peers now.
 */
import { describe, expect, it } from '@jest/globals';
import type { MeshNodeState, ObjectPeer } from '../../../../lib/core/index.js';
import { objectPeer, peerEvents } from '../../../../lib/transport/route-mesh/mesh-object-link.js';

const state = (rid: string, overrides: Partial<MeshNodeState> = {}): MeshNodeState => ({
  mesh: 'game',
  rid,
  generation: 'g1',
  objectRole: 'server',
  memberships: [],
  revision: 1,
  ...overrides,
});

const peer = (rid: string, generation = 'g1', objectTypes: string[] = [], role = 'server'): ObjectPeer =>
  ({ rid, generation, objectRole: role, objectTypes, topics: [] }) as ObjectPeer;

describe('objectPeer', () => {
  it('an Object Server carries the types it announced; none announced is []', () => {
    expect(objectPeer(state('b', { objectTypes: ['room', 'lobby'] }))).toEqual(
      peer('b', 'g1', ['room', 'lobby']),
    );
    expect(objectPeer(state('b'))).toEqual(peer('b'));
  });

  it('hosted types only on a server: a client or plain node that announced some hosts none', () => {
    expect(objectPeer(state('c', { objectRole: 'client', objectTypes: ['room'] }))).toEqual(
      peer('c', 'g1', [], 'client'),
    );
    expect(objectPeer(state('n', { objectRole: 'none', objectTypes: ['room'] })).objectTypes).toEqual([]);
  });

  it('advertised topics only on a server, in the order advertised; none advertised is []', () => {
    const topics = [
      { channel: 'news', topic: 'milestone' },
      { channel: 'news', topic: 'weather' },
    ];
    expect(objectPeer(state('b', { topics })).topics).toEqual(topics);
    expect(objectPeer(state('b')).topics).toEqual([]);
    expect(objectPeer(state('c', { objectRole: 'client', topics })).topics).toEqual([]);
  });

  it('memberships and revision are not the object layer’s', () => {
    const p = objectPeer(
      state('b', { memberships: [{ channel: 'x', weight: 1, draining: false }], revision: 9 }),
    );
    expect(Object.keys(p).sort()).toEqual(['generation', 'objectRole', 'objectTypes', 'rid', 'topics']);
  });
});

describe('peerEvents', () => {
  const none = new Map<string, string>();

  it('a new peer is up; told again, nothing', () => {
    const known = new Map<string, ObjectPeer>();
    expect(peerEvents(known, [peer('b', 'g1', ['room'])], none)).toEqual([
      { type: 'up', peer: peer('b', 'g1', ['room']) },
    ]);
    expect(peerEvents(known, [peer('b', 'g1', ['room'])], none)).toEqual([]);
    expect([...known.keys()]).toEqual(['b']);
  });

  it('new hosted types or a new role within the generation is changed; the same ones are nothing', () => {
    const known = new Map([['b', peer('b', 'g1', ['room'])]]);
    expect(peerEvents(known, [peer('b', 'g1', ['room', 'lobby'])], none)).toEqual([
      { type: 'changed', peer: peer('b', 'g1', ['room', 'lobby']) },
    ]);
    expect(peerEvents(known, [peer('b', 'g1', ['room', 'lobby'], 'client')], none)).toMatchObject([
      { type: 'changed' },
    ]);
    expect(peerEvents(known, [peer('b', 'g1', ['room', 'lobby'], 'client')], none)).toEqual([]);
  });

  it('new advertised topics within the generation are changed; the same ones are nothing', () => {
    const known = new Map([['b', peer('b')]]);
    const withTopics = { ...peer('b'), topics: [{ channel: 'news', topic: 'milestone' }] };
    expect(peerEvents(known, [withTopics], none)).toEqual([{ type: 'changed', peer: withTopics }]);
    expect(
      peerEvents(known, [{ ...withTopics, topics: [{ channel: 'news', topic: 'milestone' }] }], none),
    ).toEqual([]);
    expect(peerEvents(known, [peer('b')], none)).toEqual([{ type: 'changed', peer: peer('b') }]);
  });

  it('a peer gone is down with the reason noted for its run, or a plain one when none was', () => {
    const known = new Map([
      ['b', peer('b')],
      ['c', peer('c')],
    ]);
    const reasons = new Map([['b\u0000g1', 'judged silent']]);
    expect(peerEvents(known, [], reasons)).toEqual([
      { type: 'down', peer: { rid: 'b', generation: 'g1' }, reason: 'judged silent' },
      { type: 'down', peer: { rid: 'c', generation: 'g1' }, reason: 'it is no longer a ready peer' },
    ]);
    expect(known.size).toBe(0);
  });

  it('a new generation of a NodeRid is the old run down before the new one up', () => {
    const known = new Map([['b', peer('b', 'g1', ['room'])]]);
    const reasons = new Map([['b\u0000g1', 'it restarted with a new lifecycle generation']]);
    expect(peerEvents(known, [peer('b', 'g2', ['room'])], reasons)).toEqual([
      {
        type: 'down',
        peer: { rid: 'b', generation: 'g1' },
        reason: 'it restarted with a new lifecycle generation',
      },
      { type: 'up', peer: peer('b', 'g2', ['room']) },
    ]);
    expect(known.get('b')?.generation).toBe('g2');
  });
});
