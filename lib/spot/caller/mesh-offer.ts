import { ZLinkError } from '../../core/errors.js';
import type { MeshLink } from '../../core/ports/index.js';
import type { Clock } from '../resolve/index.js';
import type { CallName } from './object-submission.js';

/** What queueing a call for its owner peer needs. */
export interface OfferConfig {
  readonly link: MeshLink;
  readonly clock: Clock;
}

/**
 * Queues `bytes` for `to`, waiting for space within the deadline; never to another peer. Queued in
 * the caller's turn (the usual case) it returns `undefined` and makes no promise; otherwise the wait.
 */
export function offer(
  config: OfferConfig,
  to: { rid: string; generation: string },
  bytes: Uint8Array,
  deadline: number,
  signal: AbortSignal | undefined,
  what: CallName,
): Promise<void> | undefined {
  try {
    if (queueNow(config, to, bytes, what)) return undefined;
  } catch (error) {
    return Promise.reject(error);
  }
  return offerLater(config, to, bytes, deadline, signal, what);
}

async function offerLater(
  config: OfferConfig,
  to: { rid: string; generation: string },
  bytes: Uint8Array,
  deadline: number,
  signal: AbortSignal | undefined,
  what: CallName,
): Promise<void> {
  for (;;) {
    const left = deadline - config.clock.now();
    if (left <= 0)
      throw new ZLinkError('Timeout', `${what}: the mesh send queue stayed full until the deadline`);
    await config.link.waitForSpace(left, signal);
    if (queueNow(config, to, bytes, what)) return;
  }
}

/** One try: `false` when the send queue is full; `RouteError` when `to` is no longer a ready peer. */
function queueNow(
  config: OfferConfig,
  to: { rid: string; generation: string },
  bytes: Uint8Array,
  what: CallName,
): boolean {
  try {
    return config.link.send(to, bytes);
  } catch (error) {
    if (error instanceof ZLinkError && error.code === 'RouteError')
      throw new ZLinkError('RouteError', `${what}: ${error.message}`, { cause: error });
    throw error;
  }
}
