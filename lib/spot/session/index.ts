// The Session owner's side of end-user sessions: admission, ordered turns, hooks (bindings next).
export { SessionHost, type SessionHostConfig } from './session-host.js';
