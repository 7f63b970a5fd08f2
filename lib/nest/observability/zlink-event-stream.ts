import { Injectable } from '@nestjs/common';
import { Observable } from 'rxjs';
import type { SubscribeOptions, ZLinkEvent, ZLinkEventType, ZLinkEvents } from '../../core/observe/index.js';
import { ZLinkRuntime } from '../../runtime/index.js';

/** The event variant(s) whose `type` is `K`. */
export type ZLinkEventOf<K extends ZLinkEventType> = Extract<ZLinkEvent, { readonly type: K }>;

/** Per-message types: asking for them makes the message path build events (see `ZLinkEvents`). */
const PER_MESSAGE: readonly ZLinkEventType[] = ['selection', 'delivery'];

/**
 * `events` as an rxjs Observable: each subscription is one listener, removed on unsubscribe.
 * Events arrive synchronously, on the message path; heavy work belongs behind an rxjs scheduler.
 */
export function fromZLinkEvents(events: ZLinkEvents, options?: SubscribeOptions): Observable<ZLinkEvent> {
  return new Observable<ZLinkEvent>((subscriber) => events.subscribe((e) => subscriber.next(e), options));
}

/**
 * The runtime's observability events for Nest code (injectable; exported by `ZLinkModule`):
 * `events$` carries every event; `of('server_lost', 'peer_lost')` only the named types, and
 * without per-message types it leaves the message path as cheap as when nobody listens.
 */
@Injectable()
export class ZLinkEventStream {
  readonly events$: Observable<ZLinkEvent>;

  constructor(private readonly runtime: ZLinkRuntime) {
    this.events$ = fromZLinkEvents(runtime.events);
  }

  of<K extends ZLinkEventType>(...types: K[]): Observable<ZLinkEventOf<K>> {
    const wanted = new Set<ZLinkEventType>(types);
    const perMessage = types.some((t) => PER_MESSAGE.includes(t));
    return new Observable<ZLinkEventOf<K>>((subscriber) =>
      this.runtime.events.subscribe(
        (e) => {
          if (wanted.has(e.type)) subscriber.next(e as ZLinkEventOf<K>);
        },
        { perMessage },
      ),
    );
  }
}
