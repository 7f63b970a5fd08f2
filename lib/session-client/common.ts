/** What both entries (`index.ts` for Node, `browser.ts`) export besides their own client class. */
export type {
  SessionClientClose,
  SessionClientDrop,
  SessionClientMethods,
  SessionClientSettings,
  SessionResumeState,
  SessionWelcome,
} from './session-api.js';
export { ZLinkError } from '../core/errors.js';
export type { SessionCloseReason } from '../core/session-wire/index.js';
