import type { ZLinkEvents } from '../../core/observe/index.js';
import type { NormalizedSessionListener } from '../../core/options/index.js';
import type { ZLinkSession } from '../../core/objects/index.js';
import type { OwnedSession } from './owned-session.js';
import { bindingRouteOf } from './session-bindings.js';
import type { SessionObjects, SessionSink } from './session-objects.js';
import type {
  SessionBindingEndedRecord,
  SessionPushRecord,
  SessionRoomPushRecord,
  SessionRouteRecord,
  SessionSealRecord,
} from '../wire/index.js';

/** What the records need of the Session owner's host. */
export interface RecordSessions {
  readonly byId: ReadonlyMap<string, OwnedSession>;
  readonly listeners: ReadonlyMap<string, NormalizedSessionListener>;
  readonly events: ZLinkEvents;
  /** The object layer of the sessions' mesh, once attached. */
  layerNow(): SessionObjects | undefined;
  /** Sends the relay batch now. */
  flushBatch(): void;
  /** A binding of `session` leads nowhere now (`reason`): the `session` event `unbound`. */
  unbound(session: ZLinkSession, reason: string, detail: string): void;
}

/**
 * What the object layer hands the Session owner for its sessions (`SessionSink`): a bound Actor's
 * Pushes and a Spot's, a bound incarnation's end, a moving Actor's seal and route
 * (docs/protocol.md#bound-actors-that-move), an owner run that left the mesh. Each is checked against the
 * binding it names: a record for a replaced binding or a closed session changes nothing.
 */
export class SessionRecords implements SessionSink {
  private readonly roomPushes = new Map<string, number>();

  constructor(private readonly host: RecordSessions) {}

  pushed(r: Omit<SessionPushRecord, 'kind'>): void {
    this.pushTo(r, r.packet, r.payload);
  }

  /**
   * A Spot's Push (49): each target as its own Push of the member it names would be, in the record's
   * order; the record is counted once for each listener it names (`roomPushRecords`).
   */
  roomPushed(r: Omit<SessionRoomPushRecord, 'kind'>): void {
    for (const listener of new Set(r.targets.map((t) => t.listener)))
      this.roomPushes.set(listener, (this.roomPushes.get(listener) ?? 0) + 1);
    for (const t of r.targets) this.pushTo(t, r.packet, r.payload);
  }

  /** Room push records (49) this node took for `listener` since it started. */
  roomPushRecords(listener: string): number {
    return this.roomPushes.get(listener) ?? 0;
  }

  private pushTo(
    t: Pick<SessionPushRecord, 'listener' | 'sessionId' | 'bindingGeneration' | 'actorId'>,
    packet: string,
    payload: Uint8Array,
  ): void {
    const session = this.host.byId.get(t.sessionId);
    const binding = session?.bindings.get(t.actorId);
    // Only the binding it was made for: a push of a replaced binding, or for a closed session, drops.
    if (
      session === undefined ||
      binding?.bindingGeneration !== t.bindingGeneration ||
      session.listener !== t.listener
    ) {
      this.host.events.emit({
        type: 'delivery',
        result: 'drop',
        route: 'session',
        channel: t.listener,
        packet,
        reason: 'staleBinding',
      });
      return;
    }
    session.deliver(packet, payload);
  }

  bindingEnded(r: Omit<SessionBindingEndedRecord, 'kind'>): void {
    // The Actor's owner destroyed the incarnation this binding was made to (the client hears it only as
    // `unbound`, never as a Push).
    const session = this.host.byId.get(r.sessionId);
    if (session === undefined || session.listener !== r.listener) return;
    const detail = `actor '${r.actorId}' was destroyed: the binding ended with it; bind a new incarnation`;
    if (session.bindings.lose(r.actorId, { reason: 'bindingEnded', detail }, r.bindingGeneration))
      this.host.unbound(session, 'bindingEnded', detail);
  }

  sealed(
    r: Pick<SessionSealRecord, 'listener' | 'sessionId' | 'bindingGeneration' | 'relocationId' | 'actorId'>,
  ): void {
    const session = this.host.byId.get(r.sessionId);
    const binding = session?.bindings.get(r.actorId);
    // Nothing bound under that identity: nothing to hold (the answer goes all the same).
    if (session === undefined || binding?.bindingGeneration !== r.bindingGeneration) return;
    // Everything relayed before the seal leaves now, ahead of the seal's answer (43), which must travel
    // behind it: the move counts on it.
    this.host.flushBatch();
    const ms = (this.host.listeners.get(session.listener) as NormalizedSessionListener).sealTimeoutMs;
    session.bindings.seal(r.actorId, r.relocationId, ms, () =>
      session.close('relocationTimeout', `actor '${r.actorId}' moved and gave no route within ${ms} ms`),
    );
    this.bindingEvent(session, 'sealed', r.actorId, r.relocationId);
  }

  routed(r: Omit<SessionRouteRecord, 'kind'>): void {
    const session = this.host.byId.get(r.sessionId);
    const binding = session?.bindings.get(r.actorId);
    // Only the binding of that identity and incarnation: a route for a replaced binding changes nothing.
    if (
      session === undefined ||
      binding === undefined ||
      binding.bindingGeneration !== r.bindingGeneration ||
      binding.objectGeneration !== r.objectGeneration
    )
      return;
    if (r.outcome === 'commit' && r.route !== undefined) {
      const layer = this.host.layerNow();
      if (layer === undefined) return;
      // The one switch (docs/protocol.md#bound-actors-that-move): the route and the current location
      // together, then what was held.
      session.bindings.set(bindingRouteOf(layer.mesh, r.actorId, r.bindingGeneration, r.route));
    }
    session.released(r.actorId);
    this.bindingEvent(session, 'routed', r.actorId, r.relocationId, r.outcome);
  }

  private bindingEvent(
    session: OwnedSession,
    state: 'sealed' | 'routed',
    actorId: string,
    relocationId: string,
    reason?: string,
  ): void {
    this.host.events.emit({
      type: 'session',
      state,
      listener: session.listener,
      sessionId: session.id,
      ...(reason && { reason }),
      detail: `actor '${actorId}', move ${relocationId}`,
    });
  }

  ownerDown(run: { readonly rid: string; readonly nodeGeneration: string }, reason: string): void {
    for (const session of this.host.byId.values()) {
      for (const binding of session.bindings.all()) {
        const { owner } = binding.route;
        if (owner.rid !== run.rid || owner.nodeGeneration !== run.nodeGeneration) continue;
        // Its owner's run ended: the route leads nowhere; relays say so until the application binds
        // a new incarnation (a takeover once the lease lapsed), and its Actor is not told (it is gone).
        const detail = `its owner '${run.rid}' left the mesh (${reason})`;
        if (session.bindings.lose(binding.actorId, { reason: 'ownerLost', detail }))
          this.host.unbound(session, 'ownerLost', `actor '${binding.actorId}' on '${run.rid}': ${reason}`);
      }
    }
  }
}
