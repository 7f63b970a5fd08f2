import { ZLinkError } from '../core/errors.js';
import { SessionFrameKind } from '../core/session-wire/index.js';
import type { KeptFrame } from './resume-ledger.js';

/**
 * A client's requests waiting for their result (docs/sessions.md#the-node-client), by correlation:
 * each settles once, by the first of its Reply or Error, its deadline, or the session's end. No Node
 * built-in here: this runs in browsers.
 */

interface Waiting {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: ZLinkError) => void;
  readonly timer: ReturnType<typeof setTimeout>;
  readonly packet: string;
  /** Its frame, kept for a resume until the server is known to have taken it. */
  readonly kept: KeptFrame | undefined;
}

export class PendingRequests {
  private readonly waiting = new Map<number, Waiting>();

  /** Whether the request `correlation` still waits for its result. */
  has(correlation: number): boolean {
    return this.waiting.has(correlation);
  }

  /**
   * The result of the request just written as `correlation`: its reply's payload, `RemoteError` for an
   * Error, `Timeout` after `timeoutMs` (a later answer is then dropped), or what `failAll` says.
   */
  wait<T>(correlation: number, packet: string, timeoutMs: number, kept: KeptFrame | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.waiting.delete(correlation))
          reject(new ZLinkError('Timeout', `request ${packet}: no reply within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(correlation, {
        resolve: resolve as (v: unknown) => void,
        reject,
        timer,
        packet,
        kept,
      });
    });
  }

  /**
   * A Reply `[4, correlation, payload]` or an Error `[5, correlation, code, message, details?]`: its
   * request's result. Returns the request's kept frame (the server took it and all before it), or
   * `undefined` when no request waits for that correlation (it timed out) or none was kept.
   */
  settle(v: readonly unknown[]): KeptFrame | undefined {
    const correlation = v[1] as number;
    const w = this.waiting.get(correlation);
    if (!w) return undefined;
    this.waiting.delete(correlation);
    clearTimeout(w.timer);
    if (v[0] === SessionFrameKind.Reply) w.resolve(v[2]);
    else
      w.reject(
        new ZLinkError('RemoteError', `request ${w.packet}: ${String(v[2])}: ${String(v[3])}`, {
          remote:
            v[4] === undefined
              ? { code: String(v[2]), message: String(v[3]) }
              : { code: String(v[2]), message: String(v[3]), details: v[4] },
          details: v[4],
        }),
      );
    return w.kept;
  }

  /** The session ended: every request still waiting fails `Unavailable`, naming `reason`. */
  failAll(reason: string): void {
    for (const [, w] of this.waiting) {
      clearTimeout(w.timer);
      w.reject(new ZLinkError('Unavailable', `request ${w.packet}: the session ended (${reason})`));
    }
    this.waiting.clear();
  }
}
