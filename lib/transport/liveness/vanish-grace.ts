/** Descriptors of one full read by endpoint (one connection intent per endpoint). */
export function byEndpoint<D extends { readonly endpoint: string }>(
  descriptors: readonly D[],
  keep: (d: D) => boolean,
): Map<string, D[]> {
  const out = new Map<string, D[]>();
  for (const d of descriptors) {
    if (!keep(d)) continue;
    const list = out.get(d.endpoint);
    if (list) list.push(d);
    else out.set(d.endpoint, [d]);
  }
  return out;
}

/**
 * The rule every discovered target follows once its descriptor is missing from a full read
 * (docs/decisions.md): one that is not live goes at once; a live one stays `graceMs`, because after
 * a store restart (empty) its owner writes the descriptor again within one refresh.
 */
export class VanishGrace<T> {
  private readonly since = new Map<T, number>();

  constructor(private readonly graceMs: number) {}

  /** The target is listed (again). */
  listed(target: T): void {
    this.since.delete(target);
  }

  /** Whether the target is being kept through the grace. */
  isMissing(target: T): boolean {
    return this.since.has(target);
  }

  /** Forgets the target; `true` when it was being kept through the grace. */
  forget(target: T): boolean {
    return this.since.delete(target);
  }

  /** A read did not list `target`: whether it must go now (it is then forgotten). */
  mustGo(target: T, live: boolean, now: number): boolean {
    const since = this.since.get(target) ?? now;
    if (!live || now - since >= this.graceMs) {
      this.since.delete(target);
      return true;
    }
    this.since.set(target, since);
    return false;
  }
}
