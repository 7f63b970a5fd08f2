/**
 * Room pushes between real processes (issue 53 item 5) on a real redis-server: two gateways own the
 * players' sessions, an object server owns the player Actors and the `table` Spot they sit at (a
 * second server stands by), and this process connects the players.
 *
 * While every player walks (each walk pushes `walked` from its own Actor), the gateways ask the table
 * to shout (one `ctx.push` for all). Every player gets every shout once, and all its pushes in the
 * order the server's turns made them (`o`, one counter for the server process); each shout counts one
 * record on each gateway, read from the gateway's own snapshot (`roomPushRecords`).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';
import { RedisServer } from '../helpers/redis-server.js';
import { ZLinkSessionClient } from '../../lib/session-client/index.js';
import { waitFor } from '../helpers/index.js';

const PLAYERS = 8;
const SHOUTS = 12;
const WALKS = 12;

interface Pushed {
  readonly packet: string;
  readonly n: number;
  readonly o: number;
}

let redis: RedisServer | undefined;
const apps: ChildApp[] = [];
const clients: ZLinkSessionClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  for (const app of apps.splice(0)) {
    app.kill('SIGKILL');
    await app.exited;
  }
  await redis?.stop();
  redis = undefined;
});

async function start(name: string, args: Record<string, unknown>): Promise<[ChildApp, ChildMessage]> {
  const app = new ChildApp(name, 'e2e/session-node.app.js', args);
  apps.push(app);
  return [app, await app.next('ready', 60000)];
}

const recordsOn = async (gateway: ChildApp): Promise<number> => {
  const snap = await gateway.call({ type: 'snapshot' }, 15000);
  const listeners = snap.sessions as { listener: string; roomPushRecords?: number }[];
  return listeners.find((l) => l.listener === 'game')?.roomPushRecords ?? -1;
};

describe('room pushes across processes', () => {
  it(`${PLAYERS} players on 2 gateways: each of ${SHOUTS} shouts once each, in order with their own pushes, one record per gateway`, async () => {
    redis = await RedisServer.start();
    const common = { redisUrl: redis.url, keyPrefix: 'sess-room', room: 'table-1', createOn: 'server-a' };
    await start('server-a', { ...common, rid: 'server-a', role: 'server' });
    await start('server-b', { ...common, rid: 'server-b', role: 'server' });
    const gateways = await Promise.all(
      ['gateway-1', 'gateway-2'].map((rid) => start(rid, { ...common, rid, role: 'gateway' })),
    );
    const seen: Pushed[][] = [];
    for (let i = 0; i < PLAYERS; i++) {
      const port = gateways[i % 2]?.[1].port as number;
      const client = new ZLinkSessionClient({ host: '127.0.0.1', port });
      clients.push(client);
      const mine: Pushed[] = [];
      seen.push(mine);
      client.on('push', (packet: string, msg: unknown) =>
        mine.push({ packet, ...(msg as { n: number; o: number }) }),
      );
      await client.connect();
      await client.request('login', `m-${i}`);
    }

    // Players walk while the table shouts, from either gateway in turn.
    const walking = clients.map(async (c) => {
      for (let n = 1; n <= WALKS; n++) await c.request('walk', n);
    });
    const sent: number[] = [];
    for (let n = 1; n <= SHOUTS; n++) {
      const gateway = gateways[n % 2]?.[0] as ChildApp;
      sent.push((await gateway.call({ type: 'shout', n }, 15000)).sent as number);
    }
    await Promise.all(walking);
    await waitFor(() => seen.every((s) => s.length === WALKS + SHOUTS), 15000, 'every push');

    // Each shout was handed to every player's session: the count ctx.push returned.
    expect(sent).toEqual(Array.from({ length: SHOUTS }, () => PLAYERS));
    const shouts = Array.from({ length: SHOUTS }, (_, i) => i + 1);
    const walks = Array.from({ length: WALKS }, (_, i) => i + 1);
    for (const mine of seen) {
      // Every shout once, every own walk once.
      expect(mine.filter((p) => p.packet === 'news').map((p) => p.n)).toEqual(shouts);
      expect(mine.filter((p) => p.packet === 'walked').map((p) => p.n)).toEqual(walks);
      // In the order the server made them: its own pushes and the table's interleaved as its turns ran.
      const order = mine.map((p) => p.o);
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
    // Walks and shouts really interleaved (else the order above proves little).
    const interleaved = seen.filter((mine) => {
      const firstNews = mine.findIndex((p) => p.packet === 'news');
      return mine.slice(firstNews).some((p) => p.packet === 'walked');
    });
    expect(interleaved.length).toBeGreaterThan(0);
    // One record per shout per gateway, counted by each gateway.
    const records = await Promise.all(gateways.map(([g]) => recordsOn(g)));
    process.stdout.write(
      `room pushes e2e: ${SHOUTS} shouts, ${PLAYERS} players, records per gateway ${records.join('/')}\n`,
    );
    expect(records).toEqual([SHOUTS, SHOUTS]);
  }, 180000);
});
