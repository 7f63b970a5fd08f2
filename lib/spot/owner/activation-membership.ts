import type { ZLinkMembership } from '../../core/objects/index.js';
import type { MembershipImage } from '../wire/index.js';

/**
 * One activation's side of Spot membership (`ctx.membership`): on an Actor the Spot it belongs to, on
 * a Spot its members with the incarnation that joined. Changed only inside the object's own turns
 * (`member-turns.ts`), so a handler never sees it change under it; it travels in the move's image.
 */
export class ObjectMembership implements ZLinkMembership {
  spot: string | undefined = undefined;
  /** Member Actor id → the ObjectGeneration that joined, in join order. */
  readonly joined = new Map<string, number>();

  members(): readonly string[] {
    return [...this.joined.keys()];
  }

  has(id: string): boolean {
    return this.joined.has(id);
  }

  /** As a move's image carries it. */
  image(): MembershipImage {
    return { spot: this.spot, members: [...this.joined] };
  }

  /** Takes what a move carried. */
  restore(image: MembershipImage): void {
    this.spot = image.spot;
    this.joined.clear();
    for (const [id, gen] of image.members) this.joined.set(id, gen);
  }
}
