/**
 * The end-user session wire's base, shared by the listener and the session clients: the msgpack codec,
 * the length-prefixed framing, the frame kinds and the close codes (docs/sessions-wire.md). Nothing in
 * this room imports a Node built-in or uses Buffer, so a browser runs it (the browser session client
 * imports it; test/unit/session-client/browser-entry.spec.ts checks the whole graph).
 */
export * from './msgpack.js';
export * from './framing.js';
export * from './protocol.js';
