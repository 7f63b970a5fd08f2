import { isZLinkError } from '../../core/errors.js';
import type { RouteKind, ZLinkEvents } from '../../core/observe/index.js';

/** The fixed labels of one send path's `selection` events, built once per channel (or mesh). */
export interface SelectionSource {
  readonly events: ZLinkEvents;
  readonly route: RouteKind;
  readonly channel: string | undefined;
  readonly mesh: string | undefined;
  readonly sourceRid: string;
}

/**
 * Reports where a call went and whether it was queued (docs/protocol.md#what-observability-separates).
 * Callers check `events.perMessage` first, so the message path builds nothing while nobody listens.
 */
export function reportSelection(
  source: SelectionSource,
  kind: 'send' | 'request',
  channel: string | undefined,
  targetRid: string | undefined,
  admission: 'immediate' | 'after_wait' | 'refused',
  error?: unknown,
): void {
  source.events.emit({
    type: 'selection',
    route: source.route,
    kind,
    ...(channel !== undefined && { channel }),
    ...(source.mesh !== undefined && { mesh: source.mesh }),
    sourceRid: source.sourceRid,
    targetRid,
    admission,
    ...(error !== undefined && { code: isZLinkError(error) ? error.code : 'Error' }),
  });
}
