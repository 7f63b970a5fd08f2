/**
 * The players part of `npm run demo`, after the rooms: two processes of game clients connect over
 * plain TCP to the gateway's session listener, each session bound to its player Actor, which joins an
 * arena (a moving `@Spot`) on one of the object servers. They chat and move while an arena is moved to
 * the other server and back with its players; then every count is compared — what the clients sent,
 * what the players and the arenas took, what came back — and the clients leave (the Actors hear it).
 * Meanwhile lobbies on both servers hear the news by Logical Multicast: each player's milestone from
 * its arena, and each move from the gateway; every lobby must hear every one of them, once.
 */
import { LineChild, type Start } from '../demo-child.js';
import type { ArenaState, PlayerState } from './arena.js';
import type { LobbyState } from './lobby-spot.js';

const PLAYERS_PER_PROCESS = 12;
const LOBBIES = 4;

const sum = <T>(xs: readonly T[], f: (x: T) => number): number => xs.reduce((n, x) => n + f(x), 0);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function playersDemo(
  start: Start,
  servers: LineChild[],
  gateway: LineChild,
  seconds: number,
): Promise<void> {
  const { placed, port } = (await gateway.ask({ type: 'arenas', lobbies: LOBBIES })) as {
    placed: Record<string, string>;
    port: number;
  };
  const arenas = Object.keys(placed).filter((id) => id.startsWith('arena-'));
  const lobbiesOn = (rid: string): string =>
    Object.keys(placed)
      .filter((id) => id.startsWith('lobby-') && placed[id] === rid)
      .join(', ');
  console.log(
    `lobbies: ${servers.map((s) => `${lobbiesOn(s.name)} on ${s.name}`).join('; ')}, ` +
      "each subscribed to 'milestone' and 'notice' on channel 'news'",
  );
  const clients = ['east', 'west'].map(
    (name) =>
      new LineChild(
        `players-${name}`,
        start('../rooms/player-client.js', [name, String(port), `${PLAYERS_PER_PROCESS}`]),
      ),
  );
  await Promise.all(clients.map((c) => c.next()));
  const logins = await Promise.all(clients.map((c) => c.ask({ type: 'login', arenas })));
  console.log(
    `players: ${sum(logins, (l) => l.players)} game clients in ${clients.length} processes over plain TCP, ` +
      `each session bound to its player Actor in an arena ${JSON.stringify(Object.fromEntries(arenas.map((a) => [a, placed[a]])))}; ` +
      `a connection without a ticket → ${logins[0]?.withoutTicket}`,
  );

  for (const c of clients) c.child.stdin!.write(`${JSON.stringify({ type: 'play', seconds })}\n`);
  const played = Promise.all(clients.map((c) => c.next()));
  played.catch(() => undefined); // awaited below; a failure of a move first must not go unhandled
  // An arena and its players move while they play, there and back; the connections stay on the gateway.
  let notices = 0;
  for (const at of [0.3, 0.4]) {
    await sleep(seconds * 1000 * at);
    const moved = await gateway.ask({ type: 'move', arena: arenas[0] });
    if (moved.outcome === undefined) notices++;
    console.log(
      moved.outcome === undefined
        ? `  ${moved.arena} moves ${moved.from} → ${moved.to} while they play: ` +
            `${moved.playersWithIt} of ${moved.players} players with it, calls paused ${moved.pauseMs} ms`
        : `  ${moved.arena} did not move: ${moved.outcome} (${moved.reason})`,
    );
  }
  const results = await played;
  const tally = await newsHeard(gateway, notices);
  const players = tally.players as PlayerState[];
  const arenaStates = tally.arenas as ArenaState[];
  const sent = sum(results, (r) => r.chats);
  console.log(
    `players chat lines: sent ${sent}, taken by their Actors ${sum(players, (p) => p.chats)}, ` +
      `counted by the arenas ${sum(arenaStates, (a) => a.chats)}, echoed back ${sum(results, (r) => r.pushes)}; ` +
      `out of order: ${sum(players, (p) => p.outOfOrder) + sum(arenaStates, (a) => a.outOfOrder) + sum(results, (r) => r.pushesOutOfOrder)}`,
  );
  console.log(
    `players moves: ${sum(results, (r) => r.requests)} requests, ${sum(results, (r) => r.replies)} answered; ` +
      `${sum(results, (r) => r.servedByBoth)} players served by both servers over one connection; ` +
      `arenas now ${JSON.stringify(Object.fromEntries(arenaStates.map((a) => [a.arena, `${a.node} (${a.members} players)`])))}`,
  );
  const errors = Object.assign({}, ...results.map((r) => r.errors as object)) as Record<string, number>;
  console.log(`players errors ${JSON.stringify(errors)}`);
  const lobbies = tally.lobbies as LobbyState[];
  const news = await Promise.all(servers.map((s) => s.ask({ type: 'stats' })));
  const records = sum(news, (s) => Number(s.news.milestone?.records ?? 0));
  console.log(
    `lobbies heard: ${sum(arenaStates, (a) => a.milestones)} milestones published by the arenas ` +
      `(${records} records between the servers: one per milestone, to the other server), ${notices} notices by the gateway; ` +
      `each lobby heard ${JSON.stringify(Object.fromEntries(lobbies.map((l) => [l.lobby, `${l.milestones}+${l.notices}`])))}; ` +
      `twice ${sum(lobbies, (l) => l.twice)}, out of order ${sum(lobbies, (l) => l.outOfOrder)}`,
  );

  await Promise.all(clients.map((c) => c.ask({ type: 'leave' })));
  // The session ends reach the Actors as one-way notices: give them a moment.
  await sleep(300);
  const stats = await Promise.all(servers.map((s) => s.ask({ type: 'stats' })));
  const heard: Record<string, number> = {};
  for (const s of stats)
    for (const [reason, n] of Object.entries(s.sessionsEnded as Record<string, number>))
      heard[reason] = (heard[reason] ?? 0) + n;
  const { sessions } = (await gateway.ask({ type: 'tally' })) as { sessions: Record<string, unknown> };
  console.log(
    `players left: the gateway saw ${JSON.stringify(sessions)}; their Actors heard the ends ${JSON.stringify(heard)}`,
  );
}

/**
 * The gateway's tally once every lobby has heard what was published: the events and the tally's
 * requests come from different senders, so a lobby may answer before the last event has run. Gives
 * up after 3 s, and then the summary shows what is missing.
 */
async function newsHeard(gateway: LineChild, notices: number): Promise<Record<string, unknown>> {
  for (let i = 0; ; i++) {
    const tally = await gateway.ask({ type: 'tally' });
    const published = sum(tally.arenas as ArenaState[], (a) => a.milestones);
    const heard = (l: LobbyState): boolean => l.milestones === published && l.notices === notices;
    if (i === 100 || (tally.lobbies as LobbyState[]).every(heard)) return tally;
    await sleep(30);
  }
}
