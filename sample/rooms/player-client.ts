/**
 * A process of game clients for the players part of the rooms demo: `count` players, each a plain TCP
 * connection to the gateway's session listener through the package's Node session client (no ZLink
 * node here). The demo drives it with one JSON command per line on stdin:
 *  - `{type:'login', arenas}`: each player connects with its ticket and logs in to an arena (one more
 *    connection without a ticket shows a refusal);
 *  - `{type:'play', seconds}`: each player sends chat lines (one-way) and moves (requests), numbered in
 *    its own order, and counts the replies and the pushes its Actor sends back; until the time is up;
 *  - `{type:'leave'}`: every player closes its session.
 * Usage: node player-client.js <name> <gateway port> <count>
 */
import { createInterface } from 'node:readline';
import { ZLinkSessionClient, type ZLinkError } from '../../lib/session-client/index.js';
import { exitWithParent } from '../exit-with-parent.js';

const [name = 'players', port = '0', count = '12'] = process.argv.slice(2);
const say = (message: object): void => void process.stdout.write(`${JSON.stringify(message)}\n`);

interface Player {
  readonly name: string;
  readonly client: ZLinkSessionClient;
  /** The last message number sent (chat and move share it: the Actor checks the session's order). */
  seq: number;
  /** The last chat line heard back, by its number. */
  heard: number;
  /** The servers that answered this player's moves: its connection stayed, its Actor moved. */
  readonly servedBy: Set<string>;
}

const players: Player[] = [];
const counts = {
  requests: 0,
  replies: 0,
  chats: 0,
  pushes: 0,
  pushesOutOfOrder: 0,
  errors: {} as Record<string, number>,
};

function failed(error: unknown): void {
  const code = (error as ZLinkError).code ?? 'other';
  counts.errors[code] = (counts.errors[code] ?? 0) + 1;
}

const client = (token?: string): ZLinkSessionClient =>
  new ZLinkSessionClient({ host: '127.0.0.1', port: Number(port), token });

function player(id: string): Player {
  const p: Player = { name: id, client: client(`ticket:${id}`), seq: 0, heard: 0, servedBy: new Set() };
  p.client.on('push', (packet: string, msg: { seq: number }) => {
    if (packet !== 'heard') return;
    counts.pushes++;
    // Each chat line has a higher number than the one before (moves take numbers in between).
    if (msg.seq <= p.heard) counts.pushesOutOfOrder++;
    p.heard = msg.seq;
  });
  return p;
}

async function login(arenas: string[]): Promise<object> {
  const refused = await client()
    .connect()
    .then(
      () => 'admitted',
      (error: ZLinkError) => String((error.details as { reason?: string } | undefined)?.reason),
    );
  await Promise.all(
    Array.from({ length: Number(count) }, async (_, i) => {
      const p = player(`${name}-${i + 1}`);
      players.push(p);
      await p.client.connect();
      await p.client.request('login', { name: p.name, arena: arenas[i % arenas.length] });
    }),
  );
  return { players: players.length, withoutTicket: refused };
}

async function play(p: Player, until: number): Promise<void> {
  while (Date.now() < until && p.client.isOpen) {
    for (let i = 0; i < 3; i++) {
      if (p.client.send('chat', { seq: ++p.seq, text: `hello from ${p.name}` })) counts.chats++;
    }
    await move(p, 1);
  }
}

async function move(p: Player, dx: number): Promise<void> {
  counts.requests++;
  try {
    const moved = await p.client.request<{ node: string }>('move', { seq: ++p.seq, dx });
    counts.replies++;
    p.servedBy.add(moved.node);
  } catch (error) {
    failed(error);
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const command = JSON.parse(line) as { type: string; arenas?: string[]; seconds?: number };
  const run = async (): Promise<object> => {
    switch (command.type) {
      case 'login':
        return login(command.arenas ?? []);
      case 'play': {
        const until = Date.now() + (command.seconds ?? 2) * 1000;
        await Promise.all(players.map((p) => play(p, until)));
        // A last request after the chat lines: its reply comes behind their pushes.
        await Promise.all(players.map((p) => move(p, 0)));
        const servedByBoth = players.filter((p) => p.servedBy.size > 1).length;
        return { ...counts, servedByBoth };
      }
      case 'leave':
        await Promise.all(players.map((p) => p.client.close()));
        return { left: players.length };
      default:
        throw new Error(`unknown command ${line}`);
    }
  };
  run().then(
    (answer) => say({ type: command.type, ...answer }),
    (error: unknown) => say({ type: 'error', message: String((error as Error)?.message ?? error) }),
  );
});
exitWithParent({ close: async () => void (await Promise.all(players.map((p) => p.client.close()))) });
say({ type: 'ready', name });
