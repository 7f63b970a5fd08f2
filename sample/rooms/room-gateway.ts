/**
 * The rooms gateway: an Object Client on mesh `rooms` (objectRole 'client': it hosts no objects and
 * only calls them by global id). The demo drives it with one JSON command per line on stdin:
 *  - `{type:'open', rooms}`: room-1, room-3, ... by `getOrCreateSpot`; the even ones are left to the
 *    Instance intent of their first join;
 *  - `{type:'play', seconds, players}`: each player joins its room (Instance intent), then sends chat
 *    lines and asks the room's state, until the time is up; a `tick` line every second;
 *  - `{type:'check'}`: where each room lives (`resolve`), whether each room counted every chat line it
 *    was sent, two deliberate errors (a plain call to a room that does not exist, a create of an id that
 *    exists), then every room destroyed and a call after that;
 *  - the players part (./entrance.ts): `{type:'arenas', lobbies}` opens an arena on each object server
 *    and the lobbies that hear the news, and says where the game clients connect; `{type:'move', arena}`
 *    moves an arena with its players and tells the lobbies; `{type:'tally'}` counts what every arena,
 *    player and lobby took, and the sessions the gateway saw.
 * It needs the Location Store (ZLINK_DEMO_STORE).
 * Usage: node room-gateway.js <object servers>
 */
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ZLinkModule, ZLinkObjects, ZLinkRouteClient, ZLinkRuntime, isZLinkError } from '../../lib/index.js';
import { exitWithParent } from '../exit-with-parent.js';
import { Entrance } from './entrance.js';
import { NEWS } from './lobby-spot.js';
import { PLAYERS_LISTENER, type RoomState, roomsOptions } from './rooms-options.js';

const [servers = '2'] = process.argv.slice(2);
@Module({
  imports: [ZLinkModule.forRoot(roomsOptions('rooms-gateway', 'client'))],
  providers: [Entrance],
})
class RoomGatewayModule {}

const app = await NestFactory.createApplicationContext(RoomGatewayModule, { logger: false });
app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
exitWithParent(app);
const runtime = app.get(ZLinkRuntime);
const route = app.get(ZLinkRouteClient);
const objects = app.get(ZLinkObjects);
const entrance = app.get(Entrance);
const SERVERS = ['rooms-a', 'rooms-b'];
// Placement needs the object servers: until the gateway has met them, a creation ends NotFound.
await runtime.waitForPeers('rooms', Number(servers), 10000);
const say = (message: object): void => void process.stdout.write(`${JSON.stringify(message)}\n`);

/** An error as the summary counts it: its code, and the reason the runtime gave, if any. */
function errorName(error: unknown): string {
  if (!isZLinkError(error)) return 'other';
  const reason = (error.details as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' ? `${error.code} (${reason})` : error.code;
}

/** Every call the gateway makes, counted when it starts and when it ends, with its error and reason. */
const calls = { started: 0, ended: 0, requests: 0, sends: 0, replies: 0 };
const errors: Record<string, number> = {};
let chatsSent = 0;

/** The call's result in a box (a send's is `undefined`), or `undefined` when it failed. */
async function counted<T>(
  kind: 'requests' | 'sends',
  call: () => Promise<T>,
): Promise<{ value: T } | undefined> {
  calls.started++;
  calls[kind]++;
  try {
    const value = await call();
    if (kind === 'requests') calls.replies++;
    return { value };
  } catch (error) {
    errors[errorName(error)] = (errors[errorName(error)] ?? 0) + 1;
    return undefined;
  } finally {
    calls.ended++;
  }
}

const roomIds = (n: number): string[] => Array.from({ length: n }, (_, i) => `room-${i + 1}`);
let rooms: string[] = [];

async function open(n: number): Promise<object> {
  rooms = roomIds(n);
  const explicit = rooms.filter((_, i) => i % 2 === 0);
  await Promise.all(explicit.map((id) => objects.getOrCreateSpot('room', id, { init: { topic: 'ranked' } })));
  return { explicit: explicit.length, byInstanceIntent: rooms.length - explicit.length };
}

async function player(name: string, room: string, until: number): Promise<void> {
  // The Instance intent: the first join of a room nobody created creates it (once, however many
  // players race for it); a room that exists is simply joined.
  await counted('requests', () =>
    route.toSpot(room).instance('room', { topic: 'quick match' }).request('join', { player: name }).async(),
  );
  for (let line = 0; Date.now() < until; line++) {
    const sent = await counted('sends', () =>
      route
        .toSpot(room)
        .send('chat', { player: name, text: `line ${line}` })
        .metadata('locale', 'en')
        .async(),
    );
    if (sent) chatsSent++;
    if (line % 4 === 3) await counted('requests', () => route.toSpot(room).request('state', null).async());
  }
}

async function play(seconds: number, players: number): Promise<object> {
  const until = Date.now() + seconds * 1000;
  let t = 0;
  const ticker = setInterval(() => say({ type: 'tick', t: ++t, calls, errors }), 1000);
  await Promise.all(
    Array.from({ length: players }, (_, i) => player(`p${i}`, rooms[i % rooms.length] as string, until)),
  );
  clearInterval(ticker);
  return { calls, errors, chatsSent };
}

/** A deliberate error: the call's code, or 'none' if it unexpectedly succeeded. */
async function expectError(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'none';
  } catch (error) {
    return isZLinkError(error) ? error.code : 'other';
  }
}

async function check(): Promise<object> {
  const placement: Record<string, number> = {};
  let chatsCounted = 0;
  for (const id of rooms) {
    const where = await objects.resolve('spot', id);
    const owner = where.tag === 'ReadyRoute' ? where.owner.rid : where.tag;
    placement[owner] = (placement[owner] ?? 0) + 1;
    // After every send from this gateway: messages from one sender to one object run in order.
    const state = await counted('requests', () => route.toSpot(id).request('state', null).async<RoomState>());
    chatsCounted += state?.value.chats ?? 0;
  }
  const deliberate = {
    plainCallToMissingRoom: await expectError(() =>
      route.toSpot('room-404').request('join', { player: 'x' }).async(),
    ),
    createOfExistingRoom: await expectError(() => objects.createSpot('room', rooms[0] as string)),
  };
  for (const id of rooms) await objects.destroy(await objects.getOrCreateSpot('room', id));
  const afterDestroy = await expectError(() =>
    route
      .toSpot(rooms[0] as string)
      .request('state', null)
      .async(),
  );
  return { placement, chatsCounted, chatsSent, deliberate, afterDestroy, calls, errors };
}

type Command =
  | { type: 'open'; rooms: number }
  | { type: 'play'; seconds: number; players: number }
  | { type: 'check' }
  | { type: 'arenas'; lobbies: number }
  | { type: 'move'; arena: string }
  | { type: 'tally' };

async function arenas(lobbies: number): Promise<object> {
  const placed = await entrance.openArenas(SERVERS, lobbies);
  // A server advertises its lobbies' topics over its mesh links once they activate: the news starts
  // when the gateway has heard it from both (the servers heard each other at the same time).
  const hearsNews = (rid: string): boolean =>
    runtime
      .snapshot()
      .meshes[0]?.peers.find((p) => p.rid === rid)
      ?.topics?.some((t) => t.channel === NEWS && t.topic === 'milestone') === true;
  for (let i = 0; i < 100 && !SERVERS.every(hearsNews); i++) await new Promise((r) => setTimeout(r, 20));
  return { placed, port: Number(runtime.sessions.localEndpoint(PLAYERS_LISTENER)?.split(':').pop()) };
}

async function tally(): Promise<object> {
  return { ...(await entrance.tally()), sessions: entrance.sessions };
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const command = JSON.parse(line) as Command;
  const run = (): Promise<object> => {
    switch (command.type) {
      case 'open':
        return open(command.rooms);
      case 'play':
        return play(command.seconds, command.players);
      case 'check':
        return check();
      case 'arenas':
        return arenas(command.lobbies);
      case 'move':
        return entrance.move(command.arena, SERVERS);
      case 'tally':
        return tally();
    }
  };
  run().then(
    (answer) => say({ type: command.type, ...answer }),
    (error: unknown) => say({ type: 'error', message: String((error as Error)?.message ?? error) }),
  );
});
say({ type: 'ready', rid: 'rooms-gateway' });
