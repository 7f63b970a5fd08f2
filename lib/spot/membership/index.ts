// Actors joining and leaving Spots: the join and leave requests, and the runtime turns that keep
// both ends' records of a membership.
export { memberTurn } from './member-turns.js';
export { Memberships, type MemberTarget } from './memberships.js';
