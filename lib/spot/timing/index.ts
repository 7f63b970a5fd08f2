/**
 * The spot layer's tuning constants, in one home: each is named for what it times.
 * Defaults a user can set live with their options; these are fixed.
 */

/** How long a creation waits between reads while another live owner builds or releases the object. */
export const CONTENDED_WAIT_MS = [5, 10, 20, 40, 80, 100] as const;

/** How long an owner works on a creation asked of it by a peer (the asker's own deadline ends its wait). */
export const CONTROL_TIMEOUT_MS = 10000;

/**
 * How long a departed route is remembered: past the longest a call on it can still travel (a Message
 * Follow route's default life, well past any request's deadline).
 */
export const DEPARTED_MAX_AGE_MS = 30_000;

/**
 * How long each owner of a moving subscribed Spot waits for every peer's answer to its topic barrier:
 * a peer stalled past it may have an event it published in the moment of the move arrive too late
 * (dropped, never run twice or out of order).
 */
export const TOPIC_BARRIER_MS = 1000;

/** How long a flush may hold a sender's next calls to one object: past it they go (latency, not loss). */
export const FLUSH_WAIT_MS = 1000;

/**
 * How long after relaying a call Message Follow tells its sender of the move. Sent at once, the notice
 * reached the sender together with the relayed call's answer, and on two cores its work and the
 * sender's extra wake-up held that answer back: its last crossing took 180-210 µs where a direct
 * call's takes 115-130. For this long a sender keeps its old route: its calls are relayed, one hop each.
 */
export const NOTICE_DELAY_MS = 1;

/** How long a target keeps a move's entry after it opened or ended, for the source's late relays. */
export const INCOMING_LINGER_MS = 60_000;

/** How long after a move's deadline its asker still waits for the outcome (a cutover takes a store write). */
export const MOVE_ANSWER_SLACK_MS = 5000;

/** How long a deactivated member's notice to its Spot (and a Spot's to its members) may take. */
export const NOTICE_TIMEOUT_MS = 5000;

/** How long a re-check waits before reading again after the store did not answer. */
export const RECHECK_RETRY_MS = 200;

/** How long a draining node waits with no relay before it lets its follow routes go (it stops next). */
export const RELAY_QUIET_MS = 1000;

/**
 * How much of a drain's deadline its moves leave for what follows them (the peers' answers to the leave
 * barrier, then `RELAY_QUIET_MS` of quiet); a quarter of the deadline when that is less.
 */
export const DRAIN_LEAVE_RESERVE_MS = 2000;

/** How often a drain tries to move one object (a target that began draining meanwhile refuses it). */
export const DRAIN_MOVE_TRIES = 3;

/** How long a draining node waits between looks at objects still arriving by a move begun before it drained. */
export const DRAIN_ARRIVAL_POLL_MS = 50;

/** How long a release keeps trying a write the store did not answer (a destroy then fails `Unavailable`). */
export const RELEASE_RETRY_MS = 2000;

/** Between reads while the store fails, for a call that still has time. */
export const STORE_RETRY_MS = [10, 25, 50, 100, 200, 400] as const;

/** How long a target waits for the source's go once it has the image: past it, the move is off. */
export const TARGET_WAIT_MS = 30_000;

/** How long a rebind's new owner waits for the previous owner to drop its binding (the tombstone's ACK). */
export const SESSION_UNBIND_TIMEOUT_MS = 5000;

/** How long a moving bound Actor's source waits for each Session owner to seal the binding (43). */
export const SESSION_SEAL_REPLY_MS = 2000;
