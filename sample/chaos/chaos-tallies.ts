/**
 * The durable part of the chaos run: what a tally holds, and the verdict on it. A tally (a persistent
 * Actor, every turn saved before its reply; see chaos-server.ts) keeps the ops it acknowledged; each
 * client numbers its ops to one tally 0, 1, 2, … in the order it sends them. At the end a client brings
 * every tally back (a takeover restores it from the State Store) and reads what it holds; every op a
 * client heard `ok` for must be there, once, in that client's order (docs/objects.md#durable-objects).
 */

/**
 * A tally's state: per client, the ops it holds in the order they ran, as runs of consecutive numbers
 * `[from, to, from, to, …]` (an op that does not extend the last run opens a new one). Lossless —
 * `expand` gives back the exact sequence, repeats and reorders included — and a few numbers long
 * whatever the run's length, so every turn's write stays small.
 */
export type TallyState = Record<string, number[]>;

/** Adds op `n` of `client` at the end of `state`. */
export function appendOp(state: TallyState, client: string, n: number): void {
  const runs = (state[client] ??= []);
  if (runs.length > 0 && runs[runs.length - 1] === n - 1) runs[runs.length - 1] = n;
  else runs.push(n, n);
}

/** The ops of one client in the order the tally ran them. */
export function expand(runs: number[]): number[] {
  const ops: number[] = [];
  for (let i = 0; i + 1 < runs.length; i += 2) for (let n = runs[i]!; n <= runs[i + 1]!; n++) ops.push(n);
  return ops;
}

/** What a client recorded of its tally calls (part of its record file). */
export interface TallyRecord {
  /** Per tally, the ops this client heard `ok` for, in order. */
  acked: Record<string, number[]>;
  /** Get-or-creates that resolved after a call ended with the owner gone (NotFound, `ownerLeaseGone`). */
  takeovers: number;
}

/** What the client that brought the tallies back at the end wrote (`tallies.json`). */
export interface TallyRestore {
  /** How long bringing every tally back took (or how long it tried). */
  ms: number;
  /** Rounds of get-or-create + read until each answered. */
  rounds: number;
  /** What each tally that answered holds. */
  held: Record<string, TallyState>;
  /** The tallies that had not answered when the bound ran out, with their last error. */
  unread: Record<string, string>;
}

/** Activations of tallies the servers reported (`onActivate`): new, or restored from the State Store. */
export interface TallyActivations {
  created: number;
  restored: number;
}

export function tallyVerdict(
  clients: { name: string; tallies: TallyRecord }[],
  restore: TallyRestore,
  activations: TallyActivations,
) {
  let acked = 0;
  let lost = 0;
  let twice = 0;
  let outOfOrder = 0;
  let held = 0;
  const sample: string[] = [];
  const note = (s: string) => void (sample.length < 20 && sample.push(s));
  for (const [tally, state] of Object.entries(restore.held)) {
    for (const [client, runs] of Object.entries(state)) {
      const seen = new Set<number>();
      let highest = -1;
      for (const n of expand(runs)) {
        held++;
        if (seen.has(n)) {
          twice++;
          note(`${tally}: ${client}/${n} held twice`);
          continue;
        }
        seen.add(n);
        if (n < highest) {
          outOfOrder++;
          note(`${tally}: ${client}/${n} after ${client}/${highest}`);
        }
        highest = Math.max(highest, n);
      }
    }
  }
  for (const c of clients)
    for (const [tally, ops] of Object.entries(c.tallies.acked)) {
      acked += ops.length;
      const state = restore.held[tally];
      if (!state) continue; // not brought back: counted as such
      const holds = new Set(expand(state[c.name] ?? []));
      for (const n of ops)
        if (!holds.has(n)) {
          lost++;
          note(`${tally}: ${c.name}/${n} acknowledged, not in the restored state`);
        }
    }
  const unread = Object.keys(restore.unread).length;
  return {
    invariants: {
      tallyOpsLost: lost,
      tallyOpsTwice: twice,
      tallyOpsOutOfOrder: outOfOrder,
      talliesNotBack: unread,
    },
    acked,
    held,
    takeovers: clients.reduce((n, c) => n + c.tallies.takeovers, 0),
    activations,
    restore: { ms: restore.ms, rounds: restore.rounds, unread: restore.unread },
    sample,
  };
}

export type TallyVerdict = ReturnType<typeof tallyVerdict>;

/** The summary's lines for the tallies: figures, and the invariants (each `mark`ed) with samples. */
export function describeTallies(v: TallyVerdict, mark: (n: number) => string, boundMs: number) {
  const a = v.activations;
  return {
    figures: [
      `tallies: ${v.acked} turns acknowledged, ${v.held} ops held at the end; activations: ${a.created} new, ${a.restored} restored from the State Store; ${v.takeovers} get-or-creates after a call found the owner gone`,
      `tallies brought back at the end in ${(v.restore.ms / 1000).toFixed(1)} s (${v.restore.rounds} rounds of get-or-create and read; bound ${boundMs / 1000} s)`,
    ],
    invariants: [
      `  acknowledged tally turns missing from the restored state:       ${mark(v.invariants.tallyOpsLost)}`,
      `  tally ops held twice:                                           ${mark(v.invariants.tallyOpsTwice)}`,
      `  tally ops out of their client's order:                          ${mark(v.invariants.tallyOpsOutOfOrder)}`,
      `  tallies not brought back within the bound:                      ${mark(v.invariants.talliesNotBack)}`,
      ...Object.entries(v.restore.unread).map(([id, why]) => `    ${id}: ${why}`),
      ...v.sample.map((s) => `    ${s}`),
    ],
  };
}
