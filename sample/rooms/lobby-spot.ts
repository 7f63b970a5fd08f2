/**
 * The news part of the rooms demo, on the object servers: `@Spot('lobby')`, a room where players wait,
 * shows what happens elsewhere. Each lobby subscribes to two topics of the `news` channel (Logical
 * Multicast): `milestone`, which an arena publishes from its own turn when a player reaches a number
 * of chat lines, and `notice`, which the gateway publishes from outside any object when it moves an
 * arena. An event reaches every subscribed lobby as a turn of its own, over the mesh links: one record
 * per server with lobbies, whatever the number of lobbies there. Each lobby counts what it heard, and
 * whether anything came twice or out of its publisher's order.
 */
import {
  Spot,
  SpotHandler,
  SpotSubscribe,
  ZLinkContext,
  ZLinkPayload,
  type ZLinkObjectContext,
} from '../../lib/index.js';

/** The channel of the news, and a player's milestone: every this many chat lines. */
export const NEWS = 'news';
export const MILESTONE_EVERY = 25;

/** What an arena publishes when one of its players reaches a milestone. */
export interface Milestone {
  player: string;
  chats: number;
}

/** What a lobby answers to `state`. */
export interface LobbyState {
  lobby: string;
  node: string;
  milestones: number;
  notices: number;
  /** Events heard twice, and milestones of a player that came before an earlier one (always 0). */
  twice: number;
  outOfOrder: number;
}

@Spot('lobby')
export class LobbySpot {
  private readonly heard = new Set<string>();
  /** The last milestone of each player, per arena and the node it published on. */
  private readonly last = new Map<string, number>();
  private milestones = 0;
  private notices = 0;
  private twice = 0;
  private outOfOrder = 0;

  @SpotSubscribe(NEWS, 'milestone')
  @SpotHandler('milestone', { kind: 'send' })
  milestone(@ZLinkPayload() m: Milestone, @ZLinkContext() ctx: ZLinkObjectContext): void {
    const arena = ctx.multicast?.from?.id ?? '?';
    if (!this.once(`${arena}/${m.player}/${m.chats}`)) return;
    this.milestones++;
    // Per publisher, events keep their order: an arena that moves publishes from its new server
    // after the move, so the order is checked per arena and server.
    const publisher = `${arena}@${ctx.multicast?.publisherRid}/${m.player}`;
    if (m.chats < (this.last.get(publisher) ?? 0)) this.outOfOrder++;
    this.last.set(publisher, m.chats);
  }

  @SpotSubscribe(NEWS, 'notice')
  @SpotHandler('notice', { kind: 'send' })
  notice(@ZLinkPayload() text: string): void {
    if (this.once(`notice/${text}`)) this.notices++;
  }

  @SpotHandler('state')
  state(@ZLinkContext() ctx: ZLinkObjectContext): LobbyState {
    const { milestones, notices, twice, outOfOrder } = this;
    return { lobby: ctx.id, node: ctx.self.rid, milestones, notices, twice, outOfOrder };
  }

  private once(key: string): boolean {
    if (this.heard.has(key)) {
      this.twice++;
      return false;
    }
    this.heard.add(key);
    return true;
  }
}
