/**
 * The chaos harness's command line (see chaos.ts for what each option does) and the seeded random
 * numbers its fault schedule is drawn from.
 */

function option(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(argv[i + 1]);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} needs a number, got ${argv[i + 1]}`);
  return value;
}

export function parseArgs(argv: string[]) {
  const durationS = option(argv, '--duration', 60);
  const outageS = option(argv, '--outage', 10);
  const seed = option(argv, '--seed', Math.floor(Math.random() * 2 ** 31));
  const inflight = option(argv, '--inflight', 256);
  const keep = argv.includes('--keep');
  if (durationS < outageS + 4) throw new Error(`--duration ${durationS} must be at least --outage + 4 s`);
  return { durationS, outageS, seed, inflight, keep };
}

/** mulberry32: the fault schedule is reproducible from the printed seed (timing is not). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
