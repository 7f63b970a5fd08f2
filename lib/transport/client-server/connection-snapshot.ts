import type { ServerConnection } from './server-connection.js';

/** One connection as `snapshot()` shows it: where it goes, where it came from, what it confirmed. */
export function connectionSnapshot(c: ServerConnection, manual: boolean) {
  return {
    endpoint: c.endpoint,
    source: manual ? ('manual' as const) : ('discovered' as const),
    ready: c.ready,
    unconfirmed: c.isUnconfirmed,
    serverRid: c.state?.serverRid,
    generation: c.state?.generation,
    weight: c.state?.weight,
    draining: c.state?.draining,
    revision: c.state?.revision,
    queued: c.pump.queued,
  };
}
