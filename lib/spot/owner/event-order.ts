/**
 * The publishing runs a Spot incarnation remembers at most: past it the oldest is forgotten (a run
 * that has not published to this Spot for that long is almost surely gone; forgetting it can only
 * let one of its late duplicates through, never hold back a new event).
 */
const MAX_PUBLISHER_RUNS = 4096;

/**
 * One Spot incarnation's place in each publisher's stream of events: the number of the last event it
 * ran from each publishing run (`SpotEventStamp.seq`, counted per run in hand-over order). The one rule
 * that keeps "once, in each publisher's order" across a move, where an event can reach the Spot twice
 * — held and relayed by the old owner, and sent straight to the new one — and the straight copy can
 * come first: an event runs only if its number is above the last one run from its run. It moves with
 * the Spot (`image` / `restore`), so the new owner goes on where the old one stopped.
 */
export class EventOrder {
  private readonly last = new Map<string, number>();

  /** Whether event `seq` of run `generation` runs now; notes it when it does. */
  takes(generation: string, seq: number): boolean {
    const previous = this.last.get(generation);
    if (previous !== undefined) {
      if (seq <= previous) return false;
    } else if (this.last.size >= MAX_PUBLISHER_RUNS) {
      this.last.delete(this.last.keys().next().value as string);
    }
    this.last.set(generation, seq);
    return true;
  }

  /** What moves with the Spot: `[run generation, last seq]` per run. */
  image(): [string, number][] {
    return [...this.last];
  }

  /** Takes the place the Spot had on its old owner (before any event runs here). */
  restore(image: readonly (readonly [string, number])[]): void {
    for (const [generation, seq] of image) this.last.set(generation, seq);
  }
}
