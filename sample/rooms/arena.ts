/**
 * The players part of the rooms demo, on the object servers: `@Spot('arena')`, a room that moves, and
 * `@Actor('player')`, one per player, bound to the player's TCP session on the gateway. A player's
 * session frames arrive as ordinary handler calls with `ctx.session` set; the player checks that they
 * come in the order the client sent them, passes each chat line to its arena and pushes an echo back
 * to the client over the session's stored route. Every 25th line of a player, its arena tells every
 * lobby (./lobby-spot.ts). Both classes move (`relocatable`): an arena takes
 * its members with it, and the players' connections stay where they are.
 */
import { Injectable } from '@nestjs/common';
import {
  Actor,
  ActorHandler,
  Spot,
  SpotHandler,
  ZLinkContext,
  ZLinkPayload,
  ZLinkRouteClient,
  type ActorRef,
  type ZLinkObjectContext,
  type ZLinkObjectScope,
  type ZLinkSessionRef,
} from '../../lib/index.js';
import { MILESTONE_EVERY, type Milestone, NEWS } from './lobby-spot.js';

/** What an arena answers to `state`. */
export interface ArenaState {
  arena: string;
  node: string;
  members: number;
  chats: number;
  /** Milestones of its players it published to the lobbies. */
  milestones: number;
  /** Chat lines a player passed on out of its order (always 0). */
  outOfOrder: number;
}

/** What a player answers to `state`. */
export interface PlayerState {
  player: string;
  node: string;
  arena: string | undefined;
  chats: number;
  moves: number;
  /** Session messages that came out of the client's order, or twice (always 0). */
  outOfOrder: number;
}

/** What travels when an arena moves. */
interface ArenaImage {
  chats: number;
  milestones: number;
  outOfOrder: number;
  last: Record<string, number>;
}

/** Per process: how many bound sessions ended, as the players heard it (`onSessionClosed`). */
export const sessionsEnded: Record<string, number> = {};

@Spot('arena', { relocatable: true })
export class ArenaSpot {
  private chats = 0;
  private milestones = 0;
  private outOfOrder = 0;
  /** The last chat line of each player, so the arena sees that each player's lines keep their order. */
  private last: Record<string, number> = {};

  @SpotHandler('chat', { kind: 'send' })
  async chat(
    @ZLinkPayload() line: { player: string; seq: number },
    @ZLinkContext() ctx: ZLinkObjectContext,
  ): Promise<void> {
    if (line.seq !== (this.last[line.player] ?? 0) + 1) this.outOfOrder++;
    this.last[line.player] = line.seq;
    this.chats++;
    // Every lobby hears of it, on whichever server it is (./lobby-spot.ts). The publish ends when the
    // event is handed to each server with lobbies: it is not a receipt.
    if (line.seq % MILESTONE_EVERY === 0) {
      this.milestones++;
      await ctx
        .publish(NEWS, 'milestone', { player: line.player, chats: line.seq } satisfies Milestone)
        .async();
    }
  }

  @SpotHandler('state')
  state(@ZLinkContext() ctx: ZLinkObjectContext): ArenaState {
    const { id, self, membership } = ctx;
    const { chats, milestones, outOfOrder } = this;
    const members = membership.members().length;
    return { arena: id, node: self.rid, members, chats, milestones, outOfOrder };
  }

  onActorJoin(ctx: ZLinkObjectScope, player: ActorRef): void {
    if (ctx.membership.members().length >= 64) throw new Error('the arena is full');
    void player;
  }

  // What travels when the arena moves.
  capture(): ArenaImage {
    const { chats, milestones, outOfOrder, last } = this;
    return { chats, milestones, outOfOrder, last };
  }

  restore(state: ArenaImage): void {
    Object.assign(this, state);
  }
}

@Actor('player', { relocatable: true })
@Injectable()
export class PlayerActor {
  private seq = 0;
  private chats = 0;
  private moves = 0;
  private x = 0;
  private outOfOrder = 0;

  constructor(private readonly route: ZLinkRouteClient) {}

  /** A chat line from the player's session: checked against the client's order, passed to the arena. */
  @ActorHandler('chat', { kind: 'send' })
  async chat(
    @ZLinkPayload() line: { seq: number; text: string },
    @ZLinkContext() ctx: ZLinkObjectContext,
  ): Promise<void> {
    this.inOrder(line.seq);
    this.chats++;
    const arena = ctx.membership.spot;
    if (arena !== undefined)
      await this.route.toSpot(arena).send('chat', { player: ctx.id, seq: this.chats }).async();
    ctx.push('heard', { seq: line.seq });
  }

  /** A step: answered with where the player stands and which server ran it. */
  @ActorHandler('move')
  move(
    @ZLinkPayload() step: { seq: number; dx: number },
    @ZLinkContext() ctx: ZLinkObjectContext,
  ): { x: number; node: string } {
    this.inOrder(step.seq);
    this.moves++;
    this.x += step.dx;
    return { x: this.x, node: ctx.self.rid };
  }

  @ActorHandler('state')
  state(@ZLinkContext() ctx: ZLinkObjectContext): PlayerState {
    const { chats, moves, outOfOrder } = this;
    return { player: ctx.id, node: ctx.self.rid, arena: ctx.membership.spot, chats, moves, outOfOrder };
  }

  onSessionClosed(_ctx: ZLinkObjectScope, _session: ZLinkSessionRef, reason: string): void {
    sessionsEnded[reason] = (sessionsEnded[reason] ?? 0) + 1;
  }

  capture(): { seq: number; chats: number; moves: number; x: number; outOfOrder: number } {
    const { seq, chats, moves, x, outOfOrder } = this;
    return { seq, chats, moves, x, outOfOrder };
  }

  restore(state: { seq: number; chats: number; moves: number; x: number; outOfOrder: number }): void {
    Object.assign(this, state);
  }

  /** The session's messages carry the client's own numbering (chat and move share it). */
  private inOrder(seq: number): void {
    if (seq !== this.seq + 1) this.outOfOrder++;
    this.seq = seq;
  }
}
