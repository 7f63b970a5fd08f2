import { ZLinkError } from '../../core/errors.js';
import type { PendingRequests } from '../../core/calls/index.js';
import type { MeshLink } from '../../core/ports/index.js';

/**
 * One request of the runtime's own to peer `to` (a control request, a session bind, a tombstone),
 * answered by an ObjectReply or ObjectErrorReply under the correlation `encode` writes: resolves with
 * the decoded answer; ends as a request does (`Timeout`, `RouteError` when the peer is lost, the
 * peer's refusal), `Unavailable` when `to` is not a ready peer. Such records are rare and small: they
 * are never refused for queue space.
 */
export function askPeer(
  deps: { readonly pending: PendingRequests; readonly link: MeshLink },
  to: string,
  encode: (correlation: number) => Uint8Array,
  timeoutMs: number,
  what: string,
): Promise<unknown> {
  const { pending, link } = deps;
  let opened: { correlation: number; result: Promise<unknown> };
  try {
    opened = pending.open({ timeoutMs, route: to, describe: what });
  } catch (error) {
    return Promise.reject(error);
  }
  if (!link.answer(to, encode(opened.correlation)))
    pending.reject(
      opened.correlation,
      new ZLinkError('Unavailable', `${what}: node '${to}' is not a ready peer`),
    );
  return opened.result;
}
