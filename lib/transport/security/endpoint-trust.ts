import type { NormalizedEndpoint } from '../../core/options/index.js';
import type { ChannelCurve } from './curve-keyring.js';

/** A run a descriptor lists at an endpoint: a Server's or a publisher's. */
export interface ListedRun {
  readonly endpoint: string;
  readonly rid: string;
  readonly generation: string;
  readonly publicKey?: string;
}

/** A run a connection confirmed (a welcome, a beacon) and the key that connection was made to. */
export interface ConfirmedRun {
  readonly rid: string;
  readonly generation: string;
}

/**
 * Which endpoints a Client (or a fanout subscriber) may use, and with which key, from its manual
 * entries and its last discovered list — one rule for ClientServer servers and fanout publishers.
 *
 * With CURVE a connection is made to one key, which CURVE makes the other side prove: so the RID it
 * then confirms is believed only when that key is the one the RID is known by here — the manual
 * entry's (with its `rid`, when given), or the key a listed descriptor of that (RID, generation) at
 * that endpoint carries. A confirmed run whose key does not match is refused (`ridKeyMismatch`).
 */
export class EndpointTrust<D extends ListedRun> {
  /** Endpoints given by hand (and the local server's): any run there is accepted, or the one `rid` names. */
  readonly manual = new Map<string, NormalizedEndpoint>();
  /** The last discovered list by endpoint. */
  listed = new Map<string, D[]>();

  /** Refusals reported already: a recheck on every discovery read says nothing new. */
  private readonly reported = new Set<string>();

  constructor(
    private readonly curve: ChannelCurve | undefined,
    /** 'server' or 'publisher', in messages. */
    private readonly what: string,
    /** Without CURVE, where a run that is not the manual entry's `rid` is reported. */
    private readonly plainMismatch: (detail: string, endpoint: string) => void,
  ) {}

  /**
   * The key to connect to `endpoint` with (`undefined` without CURVE, or when none is known): the
   * manual entry's keys, else the keys listed there (an old run's descriptor not yet lapsed beside a
   * restarted one's), in turn after a refusal (see `pickKey`).
   */
  connectKey(endpoint: string, previous?: string, refused = false): string | undefined {
    if (this.curve === undefined) return undefined;
    const manual = this.manual.get(endpoint)?.publicKeys;
    if (manual !== undefined && manual.length > 0) return pickKey(manual, previous, refused);
    const keys = [...new Set((this.listed.get(endpoint) ?? []).map((d) => d.publicKey))].filter(
      (k): k is string => k !== undefined,
    );
    return pickKey(keys, previous, refused);
  }

  /**
   * Whether `run`, confirmed on a connection to `endpoint` made with `key`, may be used: a manual
   * endpoint's run (the one its `rid` names, when given); a listed one (the key its descriptor
   * carries, with CURVE); `undefined` when the endpoint is neither manual nor listed (the caller
   * decides: a connection kept through a grace keeps only the run it had).
   */
  accepts(endpoint: string, run: ConfirmedRun, key: string | undefined): boolean | undefined {
    const manual = this.manual.get(endpoint);
    if (manual !== undefined) {
      if (manual.rid === undefined || manual.rid === run.rid) return true;
      this.refuse(endpoint, run, key, `the ${this.what} at ${endpoint} is '${run.rid}', not '${manual.rid}'`);
      return false;
    }
    const listed = this.listed.get(endpoint);
    if (listed === undefined) return undefined;
    const same = listed.filter((d) => d.rid === run.rid && d.generation === run.generation);
    if (same.length === 0) return false;
    if (this.curve === undefined || same.some((d) => d.publicKey === key)) return true;
    this.refuse(
      endpoint,
      run,
      key,
      `the ${this.what} at ${endpoint} claims '${run.rid}' without holding the key its descriptor lists`,
    );
    return false;
  }

  /**
   * Under CURVE a run whose descriptor lists no key speaks plain ZMTP: it is never connected to
   * (`false`), and that is said once per run (`mechanismMismatch`).
   */
  speaksOurs(d: D): boolean {
    const { curve } = this;
    if (curve === undefined || d.publicKey !== undefined) return true;
    const said = `plain ${d.rid} ${d.generation}`;
    if (!this.reported.has(said)) {
      this.remember(said);
      curve.refused(
        'mechanismMismatch',
        `this side speaks CURVE; the ${this.what} '${d.rid}' at ${d.endpoint} lists no public key (give it security.curve)`,
        { endpoint: d.endpoint, peerRid: d.rid },
      );
    }
    return false;
  }

  private remember(said: string): void {
    if (this.reported.size >= MAX_REPORTED) this.reported.clear();
    this.reported.add(said);
  }

  private refuse(endpoint: string, run: ConfirmedRun, key: string | undefined, detail: string): void {
    const said = `${endpoint} ${run.rid} ${run.generation} ${key}`;
    if (this.reported.has(said)) return;
    this.remember(said);
    if (this.curve === undefined) this.plainMismatch(detail, endpoint);
    else this.curve.refused('ridKeyMismatch', detail, { endpoint, peerRid: run.rid });
  }
}

const MAX_REPORTED = 1024;

/**
 * Of the keys the other side may hold (`keys`, in order), the one to connect with next: the first;
 * the one connected to before (`previous`) while it was not refused; after a refusal, the next one —
 * how a peer rolling to a new key pair is reached under whichever it holds now.
 */
export function pickKey(
  keys: readonly string[],
  previous: string | undefined,
  refused: boolean,
): string | undefined {
  const at = previous === undefined ? -1 : keys.indexOf(previous);
  if (at < 0) return keys[0];
  return refused ? keys[(at + 1) % keys.length] : previous;
}
