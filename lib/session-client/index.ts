/** `nestjs-zlink/session-client`: a Node client of the end-user session wire (docs/sessions-wire.md). */
export {
  ZLinkSessionClient,
  type SessionClientClose,
  type SessionClientOptions,
  type SessionWelcome,
} from './session-client.js';
export { ZLinkError, type SessionCloseReason } from '../core/index.js';
