/**
 * The client's real address behind a load balancer, with no socket: the PROXY protocol header a
 * `tcp`/`tls` listener reads first, the trusted proxies whose word is believed, and the client an
 * `X-Forwarded-For` names on a WebSocket upgrade (docs/decisions.md#the-clients-address-behind-a-proxy-issue-53).
 */
// The address text and the trusted proxies are read when the options are (core/options); the door
// still shows them beside what reads the headers.
export {
  type AddressFamily,
  type RemoteAddress,
  TrustedProxies,
  formatIPv4,
  formatIPv6,
  parseIPv4,
  parseIPv6,
  parseIp,
} from '../../core/options/index.js';
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
export {
  DEFAULT_FORWARDED_MAX_BYTES,
  DEFAULT_FORWARDED_MAX_ENTRIES,
  type ForwardedFor,
  type ForwardedForOptions,
  type NormalizedForwardedForOptions,
  forwardedClient,
  normalizeForwardedForOptions,
} from './forwarded-for.js';
