/**
 * The client's real address behind a load balancer, with no socket: the PROXY protocol header a
 * `tcp`/`tls` listener reads first, the trusted proxies whose word is believed, and the client an
 * `X-Forwarded-For` names on a WebSocket upgrade (docs/decisions.md#the-clients-address-behind-a-proxy-issue-53).
 */
// The address text and the trusted proxies are read when the options are (core/options); the door
// still shows them beside what reads the headers.
export type { AddressFamily, RemoteAddress } from '../../core/kinds.js';
export {
  TrustedProxies,
  formatIPv4,
  formatIPv6,
  parseIPv4,
  parseIPv6,
  parseIp,
} from '../../core/options/index.js';
export { type PeerSocket, socketAddressOf } from './peer.js';
export { type ProxyHeaderStep, type ProxyRefusal, PROXY_REFUSALS } from './proxy-step.js';
export {
  FORWARDED_REFUSALS,
  type ForwardedRefusal,
  PROXY_LISTENER_REFUSALS,
  type ProxyListenerRefusal,
  RefusalCounts,
} from './refusals.js';
export {
  DEFAULT_V2_CAP,
  type NormalizedProxyHeaderOptions,
  type ProxyHeaderOptions,
  ProxyHeaderParser,
  normalizeProxyHeaderOptions,
  proxyHeaderBound,
} from './proxy-header.js';
export { V1_MAX_BYTES } from './proxy-v1.js';
export { V2_SIGNATURE } from './proxy-v2.js';
export {
  DEFAULT_FORWARDED_FOR_OPTIONS,
  DEFAULT_FORWARDED_MAX_BYTES,
  DEFAULT_FORWARDED_MAX_ENTRIES,
  type ForwardedFor,
  type ForwardedForOptions,
  type NormalizedForwardedForOptions,
  forwardedClient,
  normalizeForwardedForOptions,
} from './forwarded-for.js';
export { type UpgradeClient, type UpgradeRequest, clientOfUpgrade } from './upgrade-client.js';
