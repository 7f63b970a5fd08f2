import type { ServerState } from '../../core/wire/index.js';

/** Runs remembered per channel (first-ready order, superseded runs); the oldest is forgotten first. */
const MAX_RUNS = 1024;

export const runKey = (rid: string, generation: string): string => `${rid}\u0000${generation}`;

/** What `ServerRuns.choose` needs of a connection. */
export interface RunConnection {
  readonly ready: boolean;
  readonly state: ServerState | undefined;
}

/**
 * Which run (RID, lifecycle generation) of each Server RID a client uses
 * (docs/protocol.md#lifecycle-generations). Generations are not ordered, so "previous" is judged by what this
 * client saw: a run that is not draining beats one that is, otherwise the run first confirmed later wins. The
 * loser is superseded: not opened, not admitted, while a run of its RID is current; once none is, it may come
 * back.
 */
export class ServerRuns {
  private readonly firstReady = new Map<string, number>();
  private readonly superseded = new Map<string, string>();
  private seen = 0;

  isSuperseded(rid: string, generation: string): boolean {
    return this.superseded.has(runKey(rid, generation));
  }

  /**
   * One connection per RID among the ready ones (the same run reached through two endpoints is one);
   * `losers` are the connections of superseded runs, `released` says a superseded run may come back.
   */
  choose<C extends RunConnection>(
    connections: Iterable<C>,
  ): { current: Map<string, C>; losers: C[]; released: boolean } {
    const current = new Map<string, C>();
    const losers: C[] = [];
    for (const connection of connections) {
      const state = connection.state;
      if (!connection.ready || !state) continue;
      this.markReady(state);
      const other = current.get(state.serverRid);
      if (!other) current.set(state.serverRid, connection);
      else if (other.state?.generation !== state.generation) {
        const [winner, loser] = this.wins(state, other.state as ServerState)
          ? [connection, other]
          : [other, connection];
        current.set(state.serverRid, winner);
        losers.push(loser);
        this.remember(
          this.superseded,
          runKey(state.serverRid, (loser.state as ServerState).generation),
          state.serverRid,
        );
      }
    }
    let released = false;
    for (const [key, rid] of this.superseded) {
      if (!current.has(rid)) {
        this.superseded.delete(key);
        released = true;
      }
    }
    return { current, losers, released };
  }

  private wins(a: ServerState, b: ServerState): boolean {
    if (a.draining !== b.draining) return !a.draining;
    const order = (s: ServerState) => this.firstReady.get(runKey(s.serverRid, s.generation)) ?? 0;
    return order(a) > order(b);
  }

  private markReady(state: ServerState): void {
    const key = runKey(state.serverRid, state.generation);
    if (!this.firstReady.has(key)) this.remember(this.firstReady, key, ++this.seen);
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    if (!map.has(key) && map.size >= MAX_RUNS) map.delete(map.keys().next().value as string);
    map.set(key, value);
  }
}
