/**
 * The transport layer's tuning constants, in one home: each is named for what it times.
 * Defaults a user can set live with their options; these are fixed.
 */

/** Between two tries to bind the ZAP handler's socket (`BIND_ATTEMPTS` of them: about a second in all). */
export const BIND_RETRY_MS = 20;

/**
 * A client that pinged nothing for this long (of the time this listener read) is gone: no more pings to it.
 */
export const CLIENT_GONE_MS = 10000;

/**
 * An accepted connection that has not finished the ZMTP greeting and security handshake by then is
 * closed (libzmq's default is 30 s): a connection that opens and never speaks holds a descriptor no longer.
 */
export const HANDSHAKE_MS = 10000;

/** How often a connection or link not yet confirmed repeats its hello until the welcome arrives. */
export const HELLO_RETRY_MS = 250;

/**
 * After its accepted work is done, a draining receiver keeps answering `Rejected` until no business record
 * has arrived for this long (within the drain deadline). Requests a caller submitted before it learned of the
 * drain are already on the wire; they end `Rejected` (not executed, docs/protocol.md#drain) instead of
 * `RouteError` from a receiver that closed under them.
 */
export const INBOUND_DRAIN_QUIET_MS = 200;

/** How long a lost connection's already-received replies get to be read before its requests fail. */
export const LOSS_READ_GRACE_MS = 100;

/** The longest pause between two tries of a noDrop write that found a subscriber's queue full. */
export const NODROP_RETRY_MAX_MS = 20;

/**
 * Liveness is ours, in records, on every socket: no zeromq socket runs ZMTP heartbeats (see
 * `sockets.ts` for the libzmq fault that rules them out). Each side pings the other this often, and
 * drops a connection that brought nothing for `SILENCE_MS`.
 */
export const PING_INTERVAL_MS = 1000;

/** The longest wait before replacing a lost connection's DEALER (`RECONNECT_MIN_MS` doubled per failure). */
export const RECONNECT_MAX_MS = 5000;

/** Wait before replacing a lost connection's DEALER: doubles per failure, back to the start on a welcome. */
export const RECONNECT_MIN_MS = 100;

/**
 * How long after a refused CURVE handshake an outbound connection tries again (with the peer's next key, when
 * it has several).
 */
export const REFUSED_HANDSHAKE_RETRY_MS = 250;

/**
 * A superseded route stays readable this long, so replies to records that already left on it still
 * arrive; then its requests end `RouteError` and our side of it closes.
 */
export const RETIRE_GRACE_MS = 2000;

/** How often a retiring connection looks whether its last request has ended. */
export const RETIRE_POLL_MS = 50;

/**
 * zeromq.js can miss the wake-up of a send blocked at the high-water mark: seen under load, a DEALER
 * whose server had drained everything stayed blocked for good, with four records in its queue. A
 * socket that blocks sets this as its `sendTimeout`, so a blocked send ends EAGAIN after this long
 * and the pump writes it again, which looks at the socket afresh. Under ordinary backpressure that
 * is one extra wake-up per interval; nothing is given up.
 */
export const SEND_RECHECK_MS = 200;

/** A peer or server that brought nothing for this long is dropped (it pings every `PING_INTERVAL_MS`). */
export const SILENCE_MS = 3000;

/**
 * A tick this much later than its interval follows a stall of this process (see `SilenceClock`):
 * longer than event-loop lag under load, shorter than the ~2 s stall that can make a live peer look
 * silent.
 */
export const STALL_MS = 1000;

/**
 * The longest a fanout subscriber's socket waits between reconnects to a publisher (zeromq's
 * `reconnectMaxInterval`).
 */
export const SUBSCRIBER_RECONNECT_MAX_MS = 5000;

/**
 * What one byte counts for toward a session's idle timeout when it completes no frame (part of a frame
 * still arriving, a WebSocket's control frames), in ms; a whole frame counts as heard at once. So a
 * frame arriving at 1,000 bytes a second or faster keeps its session however long it takes, one
 * trickling in a byte a second is as idle as silence (docs/sessions.md#idle-timeout; the rate is
 * reasoned in docs/decisions.md).
 */
export const SESSION_BYTE_HEARD_MS = 1;

/** How long a session closed by the server keeps its connection, so its Close frame reaches the client. */
export const SESSION_CLOSE_LINGER_MS = 100;
/**
 * The longest a closed connection stays in its listener's table: its socket's own close normally
 * takes it out sooner; this bounds what a socket whose close never comes can keep.
 */
export const SESSION_TOMBSTONE_MS = 5000;
