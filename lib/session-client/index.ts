/**
 * `nestjs-zlink/session-client`: the Node client of the end-user session wire (docs/sessions-wire.md),
 * over TCP, TLS or WebSocket. Browsers import `nestjs-zlink/session-client/browser` (`browser.ts`).
 */
export { ZLinkSessionClient, type SessionClientOptions } from './session-client.js';
export type { SessionClientTls } from './node-transports.js';
export type { SessionAddress } from './session-address.js';
export * from './common.js';
