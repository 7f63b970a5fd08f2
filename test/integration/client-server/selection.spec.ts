/**
 * docs/protocol.md#weights-and-drain-state, docs/protocol.md#select-one: target selection over real connections — weights, rotation, and the local
 * Server as an ordinary candidate reached over the real DEALER→ROUTER path.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ZLinkMessageContext } from '../../../lib/core/index.js';
import type { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { Cleanup, EventCollector, waitFor } from '../../helpers/index.js';
import { listen, startRuntime, waitForCandidates } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

interface Who {
  who: string;
  tenant: string | undefined;
  frozen: boolean;
  correlation: number | undefined;
}

function whoAmI(name: string) {
  return [
    'request',
    'who',
    (_: unknown, ctx: ZLinkMessageContext): Who => ({
      who: name,
      tenant: ctx.metadata['tenant-id'],
      frozen: Object.isFrozen(ctx.metadata),
      correlation: ctx.correlation,
    }),
  ] as const;
}

async function sequential(client: ZLinkRuntime, n: number): Promise<Who[]> {
  const out: Who[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      await client.routeClient
        .requestToChannel('billing', 'who', i)
        .metadata('tenant-id', `t${i}`)
        .async<Who>({ timeoutMs: 5000 }),
    );
  }
  return out;
}

describe('a local Server is a candidate on the same terms as a remote one and is reached through the real DEALER→ROUTER path', () => {
  it('equal weights alternate between the local and the remote server; weight 0 on the local server hands everything to the remote; 100 restores it', async () => {
    const b = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      whoAmI('B'),
    ]);
    const a = await startRuntime(
      cleanup,
      {
        clientServer: {
          billing: { server: { listen }, client: { connect: [b.endpoint('billing') as string] } },
        },
      },
      [whoAmI('A')],
    );
    const events = cleanup.add(new EventCollector(a.events));
    await waitForCandidates(a, 'billing', 2);
    expect(a.snapshot().channels[0]?.role).toBe('client_and_server');

    // The local server is a connection of A's own client, confirmed by handshake like the remote one.
    const connections = a.snapshot().channels[0]?.client?.connections ?? [];
    const local = connections.find((c) => c.endpoint === a.localEndpoint('billing'));
    expect(local).toMatchObject({ ready: true, generation: a.generation });

    const first = await sequential(a, 10);
    for (let i = 1; i < first.length; i++) expect(first[i]?.who).not.toBe(first[i - 1]?.who);
    expect(first.filter((r) => r.who === 'A')).toHaveLength(5);
    // The local handler sees metadata decoded from the wire: a frozen snapshot, and a wire correlation.
    for (const [i, r] of first.entries()) {
      expect(r.tenant).toBe(`t${i}`);
      expect(r.frozen).toBe(true);
      expect(r.correlation).toEqual(expect.any(Number));
    }

    a.setChannelWeight('billing', 0);
    // The change reaches A's own client as a control record over the connection.
    await events.next(
      'server_state',
      (e) => e.serverRid === a.snapshot().channels[0]?.server?.serverRid && e.weight === 0,
    );
    expect((await sequential(a, 8)).map((r) => r.who)).toEqual(Array(8).fill('B'));

    a.setChannelWeight('billing', 100);
    await events.next('server_state', (e) => e.generation === a.generation && e.weight === 100);
    await waitForCandidates(a, 'billing', 2);
    const restored = await sequential(a, 8);
    expect(restored.filter((r) => r.who === 'A')).toHaveLength(4);
    for (let i = 1; i < restored.length; i++) expect(restored[i]?.who).not.toBe(restored[i - 1]?.who);
  });

  it('a local-only Client+Server handles its own calls through its own client connection to its listener', async () => {
    const a = await startRuntime(cleanup, { clientServer: { billing: { server: { listen }, client: {} } } }, [
      whoAmI('A'),
    ]);
    await waitForCandidates(a, 'billing', 1);
    const replies = await sequential(a, 3);
    expect(replies.map((r) => r.who)).toEqual(['A', 'A', 'A']);
    expect(a.snapshot().channels[0]?.client?.connections[0]).toMatchObject({
      endpoint: a.localEndpoint('billing'),
      ready: true,
    });
  });
});

describe('server weight allows 0, default 100, cap 10000; -1 and 10001 are rejected at a runtime change', () => {
  it('setChannelWeight refuses -1, 10001 and 1.5 with InvalidArgument and changes nothing; a channel this process does not serve is NotFound', async () => {
    const b = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      whoAmI('B'),
    ]);
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [b.endpoint('billing') as string] } } },
    });
    const events = cleanup.add(new EventCollector(client.events));
    await waitForCandidates(client, 'billing', 1);
    for (const bad of [-1, 10001, 1.5]) {
      expect(() => b.setChannelWeight('billing', bad)).toThrow(
        expect.objectContaining({ code: 'InvalidArgument' }),
      );
    }
    expect(() => b.setChannelWeight('ledger', 10)).toThrow(expect.objectContaining({ code: 'NotFound' }));
    expect(() => client.setChannelWeight('billing', 10)).toThrow(
      expect.objectContaining({ code: 'NotFound' }),
    );
    expect(b.snapshot().channels[0]?.server).toMatchObject({ weight: 100, revision: 1 });
    b.setChannelWeight('billing', 10000);
    const state = await events.next('server_state');
    expect(state).toMatchObject({ weight: 10000, draining: false });
    expect(events.of('server_state')).toHaveLength(1);
  });
});

describe('weighted round-robin across remote servers', () => {
  async function twoServers(weightA: number, weightB: number): Promise<ZLinkRuntime> {
    // A's rid sorts first (unsigned byte-wise).
    const a = await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen, rid: 'server-a', weight: weightA } } } },
      [whoAmI('A')],
    );
    const b = await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen, rid: 'server-b', weight: weightB } } } },
      [whoAmI('B')],
    );
    // List B first: the order of endpoints must not matter, only the Server RID.
    const client = await startRuntime(cleanup, {
      clientServer: {
        billing: { client: { connect: [b.endpoint('billing') as string, a.endpoint('billing') as string] } },
      },
    });
    await waitForCandidates(client, 'billing', 2);
    return client;
  }

  it('weights 100/300 → B,A,B,B for the first four calls when A’s rid is smaller; ≈1:3 over 4 000 requests', async () => {
    const client = await twoServers(100, 300);
    expect((await sequential(client, 4)).map((r) => r.who)).toEqual(['B', 'A', 'B', 'B']);

    const replies = await Promise.all(
      Array.from({ length: 4000 }, (_, i) =>
        client.routeClient.requestToChannel('billing', 'who', i).async<Who>({ timeoutMs: 30000 }),
      ),
    );
    const toA = replies.filter((r) => r.who === 'A').length;
    expect(toA).toBeGreaterThanOrEqual(900);
    expect(toA).toBeLessThanOrEqual(1100);
    expect(replies.length - toA).toBeGreaterThanOrEqual(2900);
  }, 30000);

  it('equal weights alternate, starting with the smaller Server RID', async () => {
    const client = await twoServers(100, 100);
    expect((await sequential(client, 6)).map((r) => r.who)).toEqual(['A', 'B', 'A', 'B', 'A', 'B']);
  });
});

describe('prepared candidates: peer state unchanged → no candidate rebuild on the call path', () => {
  it('1 000 requests and 1 000 sends leave the candidate rebuild count untouched', async () => {
    const server = await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen, rid: 'a' } } } },
      [whoAmI('A'), ['send', 'note', () => undefined]],
    );
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    await waitForCandidates(client, 'billing', 1);
    const channel = client.clientChannel('billing');
    if (!channel) throw new Error('no client channel');
    const rebuilds = channel.rebuilds;
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        client.routeClient.requestToChannel('billing', 'who', i).async(),
      ),
    );
    for (let i = 0; i < 1000; i++) await client.routeClient.sendToChannel('billing', 'note', i).async();
    expect(channel.rebuilds).toBe(rebuilds);
    // A real state change does rebuild.
    server.setChannelWeight('billing', 50);
    await waitFor(() => channel.rebuilds > rebuilds, 5000, 'the weight change to reach the client');
  });
});
