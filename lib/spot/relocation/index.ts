// Moving an object between object servers, either end, and what follows it: Message Follow for
// calls on old routes, the calls held for an object arriving, a draining node's leave barrier.
export { captureActivation } from './capture.js';
export { FollowRoutes } from './follow-routes.js';
export { LeaveBarrier } from './leave-barrier.js';
export { MessageFollow } from './message-follow.js';
export type { MemberPlacement, MoveRequest, MoveSessions, RelocationResult } from './move-context.js';
export { MovedCalls } from './moved-calls.js';
export { Relocations } from './relocations.js';
