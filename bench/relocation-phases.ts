/**
 * Where a move's time goes (issue 32): each move of the relocation bench cut into the steps of the
 * move protocol by the `object_relocation` events its two servers saw, with the calls the client had
 * answered in each step. Clocks: every process stamps `performance.timeOrigin + performance.now()`,
 * one clock on one machine.
 */
import { median } from './workload/stats.js';
import type { MoveMark, MoveWindow } from './systems/zlink-relocation.js';

/** The steps of one move, each from one mark to the next (the client's call and return at the ends). */
export const MOVE_STEPS = [
  {
    name: 'before the seal: the owner looked up, the request to it, the move record written',
    from: 'call',
    to: 'started',
  },
  {
    name: 'sealed: image to the target, restored there, relay-ready back',
    from: 'started',
    to: 'relayReady',
  },
  {
    name: 'sealed: held calls and the go to the target, its authority CAS',
    from: 'relayReady',
    to: 'opened',
  },
  { name: 'open on the target: its commit back to the source', from: 'opened', to: 'committed' },
  { name: "the source's answer to relocate()", from: 'committed', to: 'return' },
] as const;

type Point = (typeof MOVE_STEPS)[number]['from'] | (typeof MOVE_STEPS)[number]['to'];

export interface MoveStepFigure {
  readonly name: string;
  /** Median over the moves that had every mark. */
  readonly medianMs: number;
  /** Calls answered during the step ÷ what the rate without moves answers in as long (all moves summed). */
  readonly rateVsBaseline: number;
}

export interface MovePhases {
  /** Moves that had all four marks (an aborted move has no commit). */
  readonly moves: number;
  readonly steps: readonly MoveStepFigure[];
}

/**
 * Cuts each window (a `relocate()` call, with the answers that came in it) at the marks that fall in
 * it: a mark belongs to the move whose window holds it (moves run one after the other). `baselinePerMs`:
 * answers per millisecond without moves.
 */
export function movePhases(
  windows: readonly MoveWindow[],
  marks: readonly MoveMark[],
  baselinePerMs: number,
): MovePhases {
  const durations: number[][] = MOVE_STEPS.map(() => []);
  const answered = MOVE_STEPS.map(() => 0);
  const spent = MOVE_STEPS.map(() => 0);
  let moves = 0;
  for (const w of windows) {
    const at: Partial<Record<Point, number>> = { call: w.start, return: w.end };
    for (const m of marks) if (m.at >= w.start && m.at <= w.end) at[m.phase] ??= m.at;
    if (MOVE_STEPS.some((s) => at[s.from] === undefined || at[s.to] === undefined)) continue;
    moves++;
    MOVE_STEPS.forEach((s, i) => {
      const from = at[s.from] as number;
      const to = at[s.to] as number;
      (durations[i] as number[]).push(to - from);
      spent[i] = (spent[i] as number) + (to - from);
      answered[i] = (answered[i] as number) + w.replies.filter((t) => t >= from && t < to).length;
    });
  }
  return {
    moves,
    steps: MOVE_STEPS.map((s, i) => {
      const expected = (spent[i] as number) * baselinePerMs;
      return {
        name: s.name,
        medianMs: median(durations[i] as number[]),
        rateVsBaseline: expected > 0 ? (answered[i] as number) / expected : 0,
      };
    }),
  };
}

/** The markdown rows of the steps, with each one's share of the median move. */
export function movePhasesMarkdown(p: MovePhases): string[] {
  if (p.moves === 0) return ["Where a move's time goes: no move under load had every step's mark.", ''];
  const total = p.steps.reduce((ms, s) => ms + s.medianMs, 0);
  return [
    `Where a move's time goes (medians over ${p.moves} moves; the rate is the calls answered in that step ÷ ` +
      'what the rate without moves answers in as long):',
    '',
    '| step | ms | share of the move | rate ÷ without moves |',
    '| --- | --- | --- | --- |',
    ...p.steps.map(
      (s) =>
        `| ${s.name} | ${s.medianMs.toFixed(2)} | ${total > 0 ? ((100 * s.medianMs) / total).toFixed(0) : 0} % | ` +
        `${s.rateVsBaseline.toFixed(2)}× |`,
    ),
    '',
  ];
}
