/** Every option: shapes, defaults and the checks that turn what a user wrote into a normalized topology. */
export * from './options.js';
export * from './security-options.js';
export {
  type AddressFamily,
  type IpBytes,
  type RemoteAddress,
  formatIPv4,
  formatIPv6,
  isMappedV4,
  mapV4,
  parseIPv4,
  parseIPv6,
  parseIp,
  remoteOf,
} from './ip-text.js';
export { TrustedProxies } from './trusted-proxies.js';
