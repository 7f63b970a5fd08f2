export * from './follow-routes.js';
export * from './message-follow.js';
export { captureActivation, heldRoute } from './capture.js';
export { Relocations, type RelocationsConfig } from './relocations.js';
export type { MemberPlacement, MoveRequest, MoveSessions, RelocationResult } from './move-context.js';
export { LeaveBarrier } from './leave-barrier.js';
export { MovedCalls } from './moved-calls.js';
