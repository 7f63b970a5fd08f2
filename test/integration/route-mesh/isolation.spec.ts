/** docs/protocol.md#one-send-path-per-channelname, docs/protocol.md#handler-scopes-and-context: two MeshNames in one process stay apart — channels, Node direct handlers and targets. */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { Cleanup, outcome } from '../../helpers/index.js';
import { endpointOf, listen } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

/** A process with a MeshNode on `red` and one on `blue`, the same packet names on both. */
async function twoMeshes(name: string, peers: { red?: string; blue?: string } = {}): Promise<ZLinkRuntime> {
  const runtime = cleanup.add(
    new ZLinkRuntime({
      meshes: {
        red: {
          rid: `${name}-red`,
          listen,
          peers: peers.red ? [peers.red] : [],
          channels: { 'red.match': { role: 'server' } },
        },
        blue: {
          rid: `${name}-blue`,
          listen,
          peers: peers.blue ? [peers.blue] : [],
          channels: { 'blue.match': { role: 'server' } },
        },
      },
    }),
  );
  for (const mesh of ['red', 'blue']) {
    runtime.registerNodeHandler({
      mesh,
      kind: 'request',
      packet: 'whoami',
      handler: (_p, ctx) => `${name}:${ctx.meshName}`,
      source: `${name}.${mesh}.whoami`,
    });
    runtime.registerChannelHandler({
      channel: `${mesh}.match`,
      kind: 'request',
      packet: 'whoami',
      handler: (_p, ctx) => `${name}:${ctx.channelName}`,
      source: `${name}.${mesh}.match`,
    });
  }
  await runtime.start();
  return runtime;
}

describe('two MeshNames in one process', () => {
  it('the same packet names stay in their own mesh; a NodeRid of one mesh is not a member of the other', async () => {
    const b = await twoMeshes('b');
    const a = await twoMeshes('a', { red: endpointOf(b, 'red'), blue: endpointOf(b, 'blue') });
    await a.waitForPeers('red', 1);
    await a.waitForPeers('blue', 1);
    const rc = a.routeClient;
    expect(await rc.requestToNode('red', 'b-red', 'whoami', 0).async()).toBe('b:red');
    expect(await rc.requestToNode('blue', 'b-blue', 'whoami', 0).async()).toBe('b:blue');
    expect(await rc.requestToChannel('red.match', 'whoami', 0).async()).toBe('b:red.match');
    expect(await rc.requestToChannel('blue.match', 'whoami', 0).async()).toBe('b:blue.match');
    expect(await outcome(rc.requestToNode('blue', 'b-red', 'whoami', 0).async())).toMatchObject({
      code: 'NotFound',
    });
    expect(a.snapshot().meshes.map((m) => [m.mesh, m.sockets, m.peers.map((p) => p.rid)])).toEqual([
      ['red', 1, ['b-red']],
      ['blue', 1, ['b-blue']],
    ]);
  });

  it('an unregistered ChannelName is never sent over another mesh (NotFound)', async () => {
    const b = await twoMeshes('b');
    const a = await twoMeshes('a', { red: endpointOf(b, 'red') });
    await a.waitForPeers('red', 1);
    expect(await outcome(a.routeClient.requestToChannel('green.match', 'whoami', 0).async())).toMatchObject({
      code: 'NotFound',
    });
  });
});
