/**
 * The client's real address behind a load balancer, with no socket: the PROXY protocol header a
 * `tcp`/`tls` listener reads first, the trusted proxies whose word is believed, and the client an
 * `X-Forwarded-For` names on a WebSocket upgrade (docs/decisions.md#the-clients-address-behind-a-proxy-issue-53).
 */
export {
  type AddressFamily,
  type RemoteAddress,
  formatIPv4,
  formatIPv6,
  parseIPv4,
  parseIPv6,
  parseIp,
} from './ip-text.js';
export type { ProxyHeaderStep, ProxyRefusal } from './proxy-step.js';
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
export { TrustedProxies } from './trusted-proxies.js';
export {
  DEFAULT_FORWARDED_MAX_BYTES,
  DEFAULT_FORWARDED_MAX_ENTRIES,
  type ForwardedFor,
  type ForwardedForOptions,
  type NormalizedForwardedForOptions,
  forwardedClient,
  normalizeForwardedForOptions,
} from './forwarded-for.js';
