export * from './follow-routes.js';
export * from './message-follow.js';
