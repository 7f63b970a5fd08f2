// The caller side of the object layer: a call by global id to its owner (here or a peer), the
// answers it waits for, and the requests that create, destroy or move an object on its owner.
export { askPeer } from './ask-peer.js';
export { ObjectCaller } from './object-caller.js';
export { answerControl, controlMove, controlObject, type ObjectControlDeps } from './object-control.js';
export { destroyObject, readAuthority } from './object-destroy.js';
export { failRequestsTo, settleObjectReply } from './object-replies.js';
export type { ObjectSubmission } from './object-submission.js';
