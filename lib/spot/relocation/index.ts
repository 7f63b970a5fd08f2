export * from './follow-routes.js';
export * from './message-follow.js';
export { captureActivation, heldRoute } from './capture.js';
