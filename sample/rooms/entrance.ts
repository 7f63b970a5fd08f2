/**
 * The players part of the rooms demo, on the gateway: the session listener's handlers (a game client
 * connects with a ticket, logs in, and its session is bound to its player Actor, which then joins its
 * arena — moving to the arena's server with the session bound), and the commands the demo drives it
 * with: open the arenas and the lobbies, move an arena (its players go with it, their connections
 * stay here) and tell every lobby so, and count what every arena, player and lobby took.
 */
import { Injectable } from '@nestjs/common';
import {
  OnSessionClose,
  OnSessionOpen,
  SessionHandler,
  ZLinkObjects,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkSession,
  ZLinkSpotPublisher,
  type SessionCloseReason,
  type ZLinkSessionHello,
} from '../../lib/index.js';
import type { ArenaState, PlayerState } from './arena.js';
import { type LobbyState, NEWS } from './lobby-spot.js';
import { PLAYERS_LISTENER } from './rooms-options.js';

@Injectable()
export class Entrance {
  readonly sessions = { admitted: 0, refused: 0, loggedIn: 0, closed: {} as Record<string, number> };
  private readonly players = new Set<string>();
  /** Where each arena runs, as this gateway placed and moved it. */
  private readonly arenas = new Map<string, string>();
  private readonly lobbies: string[] = [];

  constructor(
    private readonly objects: ZLinkObjects,
    private readonly route: ZLinkRouteClient,
    private readonly news: ZLinkSpotPublisher,
  ) {}

  @OnSessionOpen(PLAYERS_LISTENER)
  open(_session: ZLinkSession, hello: ZLinkSessionHello): boolean {
    const admitted = typeof hello.token === 'string' && hello.token.startsWith('ticket:');
    this.sessions[admitted ? 'admitted' : 'refused']++;
    return admitted;
  }

  /** Binds the session to the player's Actor, then the Actor joins its arena (on the arena's server). */
  @SessionHandler(PLAYERS_LISTENER, 'login')
  async login(
    @ZLinkPayload() body: { name: string; arena: string },
    @ZLinkSession() session: ZLinkSession,
  ): Promise<string> {
    const player = await this.objects.getOrCreateActor('player', body.name);
    await session.bind(player);
    await this.objects.join(player, body.arena);
    this.players.add(body.name);
    this.sessions.loggedIn++;
    return `welcome to ${body.arena}, ${body.name}`;
  }

  @OnSessionClose(PLAYERS_LISTENER)
  close(_session: ZLinkSession, reason: SessionCloseReason): void {
    this.sessions.closed[reason] = (this.sessions.closed[reason] ?? 0) + 1;
  }

  /** The arenas, one on each object server, and `lobbies` lobbies spread over them. */
  async openArenas(servers: readonly string[], lobbies: number): Promise<Record<string, string>> {
    const placed: Record<string, string> = {};
    for (const [i, node] of servers.entries()) {
      const arena = `arena-${i + 1}`;
      await this.objects.getOrCreateSpot('arena', arena, { node });
      placed[arena] = node;
      this.arenas.set(arena, node);
    }
    for (let i = 0; i < lobbies; i++) {
      const lobby = `lobby-${i + 1}`;
      const node = servers[i % servers.length] as string;
      await this.objects.getOrCreateSpot('lobby', lobby, { node });
      placed[lobby] = node;
      this.lobbies.push(lobby);
    }
    return placed;
  }

  /** Moves an arena (with its players) to the other server while they play. */
  async move(arena: string, servers: readonly string[]): Promise<object> {
    const from = this.arenas.get(arena);
    const target = servers.find((rid) => rid !== from);
    const moved = await this.objects.relocate(arena, { target });
    if (moved.outcome !== 'committed') return { arena, from, outcome: moved.outcome, reason: moved.reason };
    this.arenas.set(arena, moved.owner);
    // From outside any object: handed to each server with lobbies when it resolves.
    await this.news.publish(NEWS, 'notice', `${arena} moved to ${moved.owner}`).async();
    const members = moved.members ?? [];
    return {
      arena,
      from,
      to: moved.owner,
      pauseMs: Math.round(moved.pauseMs),
      players: members.length,
      playersWithIt: members.filter((m) => m.withSpot).length,
    };
  }

  /** What each arena, player and lobby counted, from their own state. */
  async tally(): Promise<{ arenas: ArenaState[]; players: PlayerState[]; lobbies: LobbyState[] }> {
    const [spots, players, lobbies] = await Promise.all([
      Promise.all(
        [...this.arenas.keys()].map((id) => this.route.toSpot(id).request('state', null).async<ArenaState>()),
      ),
      Promise.all(
        [...this.players].map((id) => this.route.toActor(id).request('state', null).async<PlayerState>()),
      ),
      Promise.all(this.lobbies.map((id) => this.route.toSpot(id).request('state', null).async<LobbyState>())),
    ]);
    return { arenas: spots, players, lobbies };
  }
}
