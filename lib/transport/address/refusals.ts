import { PROXY_REFUSALS } from './proxy-step.js';

/**
 * Why a `tcp` or `tls` entry with `proxyProtocol` refused a connection: a peer that is no trusted proxy
 * (`untrusted`, refused before any byte is read), the header's own reasons (`ProxyRefusal`), and a
 * header not whole within `helloTimeoutMs` (`timeout`).
 */
export const PROXY_LISTENER_REFUSALS = ['untrusted', ...PROXY_REFUSALS, 'timeout'] as const;
export type ProxyListenerRefusal = (typeof PROXY_LISTENER_REFUSALS)[number];

/**
 * What a `websocket` entry counts of `X-Forwarded-For`: a header from a peer that is no trusted proxy
 * (`untrusted`: not read, the peer is the client, the upgrade goes on), and a trusted proxy's header
 * refused with its upgrade (`oversize`, `malformed`).
 */
export const FORWARDED_REFUSALS = ['untrusted', 'oversize', 'malformed'] as const;
export type ForwardedRefusal = (typeof FORWARDED_REFUSALS)[number];

/** A listener's refusals by reason, every reason from 0, for its snapshot (`proxyRefusals`). */
export class RefusalCounts<R extends string> {
  private readonly counts: Record<R, number>;

  constructor(reasons: readonly R[]) {
    this.counts = Object.fromEntries(reasons.map((r) => [r, 0])) as Record<R, number>;
  }

  count(reason: R): void {
    this.counts[reason]++;
  }

  /** A copy: every reason, in the order given. */
  snapshot(): Readonly<Record<R, number>> {
    return { ...this.counts };
  }
}
