/** `nestjs-zlink/session-client`: a Node client of the end-user session wire (docs/sessions-wire.md). */
export { ZLinkSessionClient, type SessionClientOptions } from './session-client.js';
export type {
  SessionClientClose,
  SessionClientMethods,
  SessionClientSettings,
  SessionWelcome,
} from './session-machine.js';
export type { SessionAddress } from './session-address.js';
export { ZLinkError } from '../core/errors.js';
export type { SessionCloseReason } from '../core/session-wire/index.js';
