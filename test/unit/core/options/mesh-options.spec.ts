import { describe, expect, it } from '@jest/globals';
import { configError } from '../config-error.js';
import { normalizeOptions } from '../../../../lib/core/index.js';

/** The `meshes` option (issue 4): bad RouteMesh topology fails at startup with `Configuration` naming the field. */

describe('meshes', () => {
  it('normalizes a MeshNode: defaults, peers in both forms, channel roles and weights', () => {
    const options = normalizeOptions({
      meshes: {
        game: {
          rid: 'node-a',
          peers: ['tcp://127.0.0.1:5001', { endpoint: 'tcp://127.0.0.1:5002', rid: 'node-b' }],
          channels: { match: { role: 'server', weight: 300 }, chat: { role: 'client' } },
        },
      },
    });
    const game = options.meshes.get('game');
    expect(game).toMatchObject({
      mesh: 'game',
      rid: 'node-a',
      objectRole: 'none',
      listen: { port: 0, bindHost: '0.0.0.0' },
      peers: [
        { endpoint: 'tcp://127.0.0.1:5001', rid: undefined },
        { endpoint: 'tcp://127.0.0.1:5002', rid: 'node-b' },
      ],
    });
    expect(game?.channels.get('match')).toEqual({ channel: 'match', role: 'server', weight: 300 });
    expect(game?.channels.get('chat')).toEqual({ channel: 'chat', role: 'client', weight: 100 });
  });

  it.each<[string, unknown, string]>([
    ['not an object', 'x', 'meshes.game'],
    ['an unknown key', { colour: 1 }, 'meshes.game.colour'],
    ['a NodeRid starting with ep:', { rid: 'ep:x' }, 'meshes.game.rid'],
    ['a NodeRid over 255 bytes', { rid: 'r'.repeat(256) }, 'meshes.game.rid'],
    ['an empty NodeRid', { rid: '' }, 'meshes.game.rid'],
    ['a bad peer endpoint', { peers: ['localhost:1'] }, 'meshes.game.peers[0]'],
    ['a peer listed twice', { peers: ['tcp://h:1', { endpoint: 'tcp://h:1' }] }, 'meshes.game.peers[1]'],
    [
      'a peer with our own RID',
      { rid: 'a', peers: [{ endpoint: 'tcp://h:1', rid: 'a' }] },
      'meshes.game.peers[0].rid',
    ],
    ['a bad role', { channels: { match: { role: 'both' } } }, 'meshes.game.channels.match.role'],
    [
      'a weight on a client role',
      { channels: { match: { role: 'client', weight: 5 } } },
      'meshes.game.channels.match.weight',
    ],
    [
      'a weight out of range',
      { channels: { match: { role: 'server', weight: 10001 } } },
      'meshes.game.channels.match.weight',
    ],
    ['an object role without a store', { objectRole: 'client' }, 'meshes.game.objectRole'],
    ['automatic discovery without a store', { discovery: 'auto' }, 'meshes.game.discovery'],
  ])('%s fails naming %s', (_what, mesh, field) => {
    expect(configError({ meshes: { game: mesh } }).message).toContain(field);
  });

  it('two MeshNodes with one NodeRid fail naming both', () => {
    const e = configError({ meshes: { a: { rid: 'same' }, b: { rid: 'same' } } });
    expect(e.message).toContain('meshes.b.rid');
    expect(e.message).toContain('meshes.a');
  });

  it('one ChannelName on two meshes fails: one name, one send path', () => {
    const e = configError({
      meshes: {
        a: { channels: { match: { role: 'server' } } },
        b: { channels: { match: { role: 'client' } } },
      },
    });
    expect(e.message).toContain('meshes.b.channels.match');
    expect(e.message).toContain('meshes.a.channels.match');
  });
});
