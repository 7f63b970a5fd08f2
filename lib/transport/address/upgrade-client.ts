import type { RemoteAddress } from '../../core/kinds.js';
import type { TrustedProxies } from '../../core/options/index.js';
import {
  DEFAULT_FORWARDED_FOR_OPTIONS,
  type NormalizedForwardedForOptions,
  forwardedClient,
} from './forwarded-for.js';
import { type PeerSocket, socketAddressOf } from './peer.js';
import type { ForwardedRefusal, RefusalCounts } from './refusals.js';

/** What a WebSocket upgrade handler has of the request (Node's `http.IncomingMessage` is one). */
export interface UpgradeRequest {
  readonly socket: PeerSocket;
  /** The request's headers as Node gives them: lowercase names, a repeated `X-Forwarded-For` joined. */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
}

/**
 * Whom a WebSocket session belongs to:
 * - `client`: the session's address (the peer, or the client a trusted proxy's `X-Forwarded-For` names);
 * - `refused`: the upgrade is refused: a trusted proxy's header over the bounds (`oversize`) or with a
 *   hop that is no address (`malformed`), both counted; or the connection already went (`gone`, not
 *   counted: nobody is left to answer).
 */
export type UpgradeClient =
  | { readonly client: RemoteAddress; readonly refused?: undefined }
  | { readonly refused: 'oversize' | 'malformed' | 'gone'; readonly detail: string };

/**
 * The client of a WebSocket upgrade request, for a `websocket` listener entry to call once per upgrade
 * with the entry's `trustedProxies` and its refusal counts (docs/sessions.md#behind-a-reverse-proxy).
 * `X-Forwarded-For` is read only from a trusted peer, right to left, past the trusted hops; from any
 * other peer it is not read at all and never believed: the peer is the client, the upgrade goes on,
 * and the header is counted (`untrusted`), so a client can never name its own address. A trusted
 * proxy's header that cannot be read refuses the upgrade, counted by reason
 * (docs/decisions.md#the-clients-address-behind-a-proxy-issue-53).
 */
export function clientOfUpgrade(
  request: UpgradeRequest,
  trusted: TrustedProxies,
  refusals: RefusalCounts<ForwardedRefusal>,
  options: NormalizedForwardedForOptions = DEFAULT_FORWARDED_FOR_OPTIONS,
): UpgradeClient {
  const peer = socketAddressOf(request.socket);
  if (peer === undefined)
    return { refused: 'gone', detail: 'the connection went before its upgrade was read' };
  const forwarded = forwardedClient(peer, request.headers['x-forwarded-for'], trusted, options);
  if (forwarded.outcome === 'refused') {
    refusals.count(forwarded.reason);
    return { refused: forwarded.reason, detail: forwarded.detail };
  }
  if (forwarded.outcome === 'untrusted') refusals.count('untrusted');
  return { client: forwarded.client };
}
