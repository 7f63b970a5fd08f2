import { afterEach, describe, expect, it } from '@jest/globals';
import {
  MemoryLocationStore,
  MemoryStateStore,
  type StateWrite,
  type StateWriteResult,
  type ZLinkObjectContext,
  type ZLinkRuntime,
} from '../../../lib/index.js';
import type { ZLinkSessionContext } from '../../../lib/core/index.js';
import { ZLinkSessionClient } from '../../../lib/session-client/index.js';
import { Cleanup, outcome, waitFor } from '../../helpers/index.js';
import { objectClass, objectMeshOptions, registry, startRuntime } from './harness.js';
import { portOf } from '../sessions/harness.js';

/**
 * What an every-turn persistent Actor lets out while its state is on its way to the store
 * (docs/objects.md#durable-objects): nothing — neither the turn's reply nor its pushes — until the store
 * took it; and when the store fails, the turn's reply is `StateNotSaved`, its pushes never leave, and
 * new calls are refused until a write lands. A gateway and an object server in one process (real
 * sockets) and a session client; the State Store is the memory one behind a gate the test opens.
 */

/** `MemoryStateStore` whose writes wait while the gate is shut, or fail while `down`. */
class GatedStateStore extends MemoryStateStore {
  waiting = 0;
  down = false;
  private gate: Promise<void> | undefined;
  private openGate: () => void = () => undefined;

  shut(): void {
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  open(): void {
    this.gate = undefined;
    this.openGate();
  }

  override async write(batch: readonly StateWrite[]): Promise<StateWriteResult[]> {
    if (this.down) throw new Error('the store is down');
    const gate = this.gate;
    if (gate !== undefined) {
      this.waiting++;
      await gate;
      this.waiting--;
    }
    return super.write(batch);
  }
}

class Player {
  x = 0;
  move(by: number, ctx: ZLinkObjectContext): number {
    this.x += by;
    ctx.push('moved', this.x);
    return this.x;
  }
  capture(): { x: number } {
    return { x: this.x };
  }
  restore(state: { x: number }): void {
    this.x = state.x;
  }
}

/** Not persistent: its reply follows the held one on the same connections, and is not held. */
class Guest {
  ping(): string {
    return 'pong';
  }
}

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

async function setup(): Promise<{
  store: GatedStateStore;
  client: ZLinkSessionClient;
  events: string[];
  server: ZLinkRuntime;
  gateway: ZLinkRuntime;
}> {
  const location = new MemoryLocationStore();
  const store = new GatedStateStore();
  const classes = registry(
    {
      ...objectClass('actor', 'player', Player, { move: [{ method: 'move' }] }),
      options: { persist: {} },
    },
    objectClass('actor', 'guest', Guest, { ping: [{ method: 'ping' }] }),
  );
  const server = cleanup.add(
    await startRuntime(
      objectMeshOptions(location, 'server', 'objects-a', { stateStores: { players: { instance: store } } }),
      classes,
    ),
  );
  const gateway = new (server.constructor as typeof ZLinkRuntime)(
    objectMeshOptions(location, 'client', 'gateway-a', {
      sessions: { game: { mesh: 'objects', listen: { bindHost: '127.0.0.1', port: 0 } } },
    }),
  );
  gateway.sessions.registerHandler({
    listener: 'game',
    kind: 'request',
    packet: 'login',
    source: 'login',
    handler: async (_payload, ctx) => {
      const { session } = ctx as ZLinkSessionContext;
      await session.bind(await gateway.objects.getOrCreateActor('player', 'ann'));
      await session.bind(await gateway.objects.getOrCreateActor('guest', 'ann-guest'));
      return session.actors;
    },
  });
  gateway.sessions.registerHandler({
    listener: 'game',
    kind: 'request',
    packet: 'ping',
    source: 'ping',
    handler: (_payload, ctx) =>
      (ctx as ZLinkSessionContext).session.relay('ping', null, { actor: 'ann-guest' }),
  });
  await gateway.start();
  cleanup.add(gateway);
  await gateway.waitForPeers('objects', 1);
  const client = new ZLinkSessionClient({ host: '127.0.0.1', port: portOf(gateway) });
  cleanup.add({ close: () => client.close() });
  const events: string[] = [];
  client.on('push', (packet: string, msg: unknown) => events.push(`${packet} ${String(msg)}`));
  await client.connect();
  await client.request('login', null);
  return { store, client, events, server, gateway };
}

describe('an every-turn persistent Actor, while its state is on the way', () => {
  it('lets out neither the reply nor the push until the store took the state', async () => {
    const { store, client, events } = await setup();
    expect(await client.request('move', 1)).toBe(1);
    await waitFor(() => events.length === 1, 5000, 'the first push');

    store.shut();
    const move = client.request('move', 2).then((x) => events.push(`reply ${String(x)}`));
    await waitFor(() => store.waiting === 1, 5000, 'the write at the store');
    // The guest's answer leaves the same server after the move's turn ended, over the same connections:
    // had the push or the reply not been held, they would be here before it.
    expect(await client.request('ping', null)).toBe('pong');
    expect(events).toEqual(['moved 1']);

    events.push('store took it');
    store.open();
    await move;
    await waitFor(() => events.length === 4, 5000, 'the held push and reply');
    expect(events).toEqual(['moved 1', 'store took it', 'moved 3', 'reply 3']);
  });

  it('answers StateNotSaved when the store fails, drops the push, refuses calls until a write lands', async () => {
    const { store, client, events, server, gateway } = await setup();
    expect(await client.request('move', 1)).toBe(1);
    store.down = true;
    const failed = await outcome(client.request('move', 2));
    expect(failed).toMatchObject({ error: { code: 'RemoteError', remote: { code: 'StateNotSaved' } } });
    const refused = await outcome(client.request('move', 4));
    // Through a session, the owner's refusal arrives as the Actor's answer: RemoteError naming it.
    expect(refused).toMatchObject({
      error: { code: 'RemoteError', remote: { code: 'Rejected', details: { reason: 'stateNotSaved' } } },
    });

    store.down = false;
    // The retry lands within a second; then the object takes calls again, with the state it had.
    let answer: unknown;
    for (let i = 0; i < 50 && answer === undefined; i++) {
      const r = await outcome(client.request('move', 10));
      if (r.ok) answer = r.value;
      else {
        expect(r.error).toMatchObject({ remote: { code: 'Rejected', details: { reason: 'stateNotSaved' } } });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    expect(answer).toBe(13);
    // The server counted the write that failed, and the ones that landed.
    const counted = server.metrics().objects.find((o) => o.type === 'player');
    expect(counted?.stateWrites.failed).toBeGreaterThanOrEqual(1);
    expect(counted?.stateWrites.ok).toBeGreaterThanOrEqual(2);
    await waitFor(() => events.includes('moved 13'), 5000, 'the push of the turn after the outage');
    // The push of the turn whose state was not saved never left.
    expect(events).toEqual(['moved 1', 'moved 13']);

    // A destroy whose tombstone the store does not take changes nothing: the object runs on.
    const ref = await gateway.objects.getOrCreateActor('player', 'ann');
    store.down = true;
    await expect(gateway.objects.destroy(ref)).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'stateNotSaved' },
    });
    store.down = false;
    const saved = () => server.metrics().objects.find((o) => o.type === 'player')?.stateWrites.ok ?? 0;
    const before = saved();
    expect(await client.request('move', 1)).toBe(14);
    // ... and still saves its turns.
    expect(saved()).toBe(before + 1);
    await gateway.objects.destroy(ref);
    expect(await outcome(client.request('move', 1))).toMatchObject({ ok: false });
  });
});
