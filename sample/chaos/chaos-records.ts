/**
 * What a chaos client records of each request it starts (see chaos-client.ts): its start, its first
 * terminal and when, how many times it settled, its arrangement and the server it was sent to.
 */
/** Per-request records in growable typed arrays (a 60 s run starts about a million requests). */
export class Records {
  size = 0;
  start = new Float64Array(1 << 16);
  end = new Float64Array(1 << 16);
  settles = new Uint8Array(1 << 16);
  terminal = new Uint8Array(1 << 16);
  arrangement = new Uint8Array(1 << 16);
  target = new Uint8Array(1 << 16);
  readonly kinds: string[] = ['none', 'reply'];
  readonly targets: string[] = ['?'];
  /** Ids of requests whose promise settled more than once (impossible for one promise; counted anyway). */
  readonly multi: number[] = [];
  /** First settles so far, by kind (for the live display). */
  readonly counts: Record<string, number> = {};
  settled = 0;

  open(arrangement: number, at: number): number {
    if (this.size === this.start.length) this.grow();
    const seq = this.size++;
    this.start[seq] = at;
    this.arrangement[seq] = arrangement;
    return seq;
  }

  settle(seq: number, kind: string, at: number): void {
    const n = ++this.settles[seq]!;
    if (n > 1) {
      this.multi.push(seq);
      return;
    }
    this.end[seq] = at;
    this.terminal[seq] = this.index(this.kinds, kind);
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
    this.settled++;
  }

  setTarget(seq: number, rid: string): void {
    this.target[seq] = this.index(this.targets, rid);
  }

  private index(list: string[], value: string): number {
    let i = list.indexOf(value);
    if (i < 0) i = list.push(value) - 1;
    return i;
  }

  private grow(): void {
    const n = this.start.length * 2;
    this.start = grown(this.start, new Float64Array(n));
    this.end = grown(this.end, new Float64Array(n));
    this.settles = grown(this.settles, new Uint8Array(n));
    this.terminal = grown(this.terminal, new Uint8Array(n));
    this.arrangement = grown(this.arrangement, new Uint8Array(n));
    this.target = grown(this.target, new Uint8Array(n));
  }
}

function grown<T extends Float64Array | Uint8Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
