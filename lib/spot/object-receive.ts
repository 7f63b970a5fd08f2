import { RecordKind } from '../core/wire/index.js';
import type { InboundObjectRecord, PeerAddress } from '../core/ports/index.js';
import { decodeObjectRecord, encodeOwnerLeave, readLoneObjectRecord } from './wire/index.js';
import { answerControl, failRequestsTo, type ObjectControlDeps, settleObjectReply } from './caller/index.js';
import { inboundCall, type ObjectHost, staleRoute } from './owner/index.js';
import type { RouteCache } from './resolve/index.js';
import type { LeaveBarrier, MovedCalls, Relocations } from './relocation/index.js';
import type { ObjectLayerConfig } from './object-layer-config.js';
import type { SpotMulticast } from './multicast/index.js';
import {
  answerSessionBind,
  answerSessionSeal,
  answerSessionUnbind,
  runEnded,
  type SessionDeps,
} from './session/index.js';

/** What the receive switch hands records to: each side of the layer, built once by `ObjectLayer`. */
export interface ReceiveParts {
  readonly config: ObjectLayerConfig;
  readonly cache: RouteCache;
  readonly control: ObjectControlDeps;
  readonly leave: LeaveBarrier;
  readonly relocations: Relocations | undefined;
  readonly host: ObjectHost | undefined;
  readonly moved: MovedCalls | undefined;
  readonly sessions: SessionDeps;
  readonly multicast: SpotMulticast;
}

/**
 * Where all object traffic enters this node: every object record a peer sends, by kind (answers to
 * the caller side, calls and moves to the owner side, route news to the cache), and the object
 * layer's own handling of a lost peer run (multicast and the caller's waits keep their own
 * listeners). A record that cannot be read is counted (`protocol_error`) and dropped; nothing here throws.
 */
export class ObjectReceiver {
  private readonly onStale: Parameters<typeof settleObjectReply>[6];

  constructor(private readonly parts: ReceiveParts) {
    const { cache } = parts;
    this.onStale = (objectKind, id, fences) => cache.invalidateStale(objectKind, id, fences);
  }

  /** Listens on the object mesh's link (`receive`, `peerDown`); returns how to stop listening. */
  listen(): () => void {
    const { link } = this.parts.config;
    const offRecord = link.onRecord((record) => this.receive(record));
    const offPeer = link.onPeer((e) => e.type === 'down' && this.peerDown(e.peer, e.reason));
    return () => {
      offRecord();
      offPeer();
    };
  }

  /**
   * Peer run `peer` left the mesh: it answered the leave barrier, moves with it end, routes to it and
   * requests waiting on it go, and sessions bound through it hear it (`runEnded`).
   */
  peerDown(peer: PeerAddress, reason: string): void {
    const { config, cache, leave, relocations, sessions } = this.parts;
    leave.answered(peer.rid);
    relocations?.peerDown(peer.rid);
    const run = { rid: peer.rid, nodeGeneration: peer.generation };
    cache.ownerRunEnded(run);
    failRequestsTo(config.pending, peer.rid, reason);
    runEnded(sessions, run, reason);
  }

  /** One record from a peer, by kind (see the class). */
  receive(record: InboundObjectRecord): void {
    const r = readLoneObjectRecord(record.bytes) ?? decodeObjectRecord(record.bytes);
    const { config, cache, host } = this.parts;
    const { events, mesh, link, self, pending } = config;
    if (typeof r === 'string') {
      events.emit({ type: 'protocol_error', route: 'route-mesh', mesh, peerRid: record.from.rid, reason: r });
      return;
    }
    switch (r.kind) {
      case RecordKind.ObjectReply:
      case RecordKind.ObjectErrorReply:
        settleObjectReply(pending, events, mesh, self, record.from.rid, r, this.onStale);
        return;
      case RecordKind.ObjectStale:
        cache.invalidateStale(r.objectKind, r.id, r.fences);
        return;
      case RecordKind.MessageFollow:
        // Only the route the message came on goes, never a newer entry (docs/protocol.md#message-follow); a
        // lost notice costs latency only (the detour goes on until the entry expires).
        cache.invalidateStale(r.objectKind, r.id, r.source, 'moved');
        return;
      case RecordKind.ObjectControl:
        answerControl(this.parts.control, r);
        return;
      case RecordKind.OwnerLeaving:
        // Its objects moved on: the next call to any of them reads the new owner. Calls sent there
        // before this answer travel ahead of it, and it relays them.
        cache.ownerRunEnded({ rid: record.from.rid, nodeGeneration: r.nodeGeneration }, 'ownerLeaving');
        link.answer(record.from.rid, encodeOwnerLeave(RecordKind.OwnerLeft, r.nodeGeneration));
        return;
      case RecordKind.OwnerLeft:
        this.parts.leave.answered(record.from.rid, r.nodeGeneration);
        return;
      case RecordKind.SessionBind:
        return answerSessionBind(this.parts.sessions, r);
      case RecordKind.SessionUnbind:
        return answerSessionUnbind(this.parts.sessions, r);
      case RecordKind.SessionRelocationSeal:
        return answerSessionSeal(this.parts.sessions, r);
      case RecordKind.SessionRelocationSealReply:
        if (r.originGeneration === self.nodeGeneration) pending.resolve(r.correlation, null);
        return;
      case RecordKind.SessionRelocationRoute:
        this.parts.sessions.sessions?.routed(r);
        return;
      case RecordKind.SessionPush:
      case RecordKind.SessionBindingEnded:
      case RecordKind.SessionRoomPush: {
        const sink = this.parts.sessions.sessions;
        if (sink === undefined) {
          const what =
            r.kind === RecordKind.SessionRoomPush
              ? `room push of spot '${r.spotId}'`
              : `session push for '${r.sessionId}'`;
          const reason = `${what}: this node has no session listener`;
          events.emit({
            type: 'protocol_error',
            route: 'route-mesh',
            mesh,
            peerRid: record.from.rid,
            reason,
          });
        } else if (r.kind === RecordKind.SessionPush) sink.pushed(r);
        else if (r.kind === RecordKind.SessionRoomPush) sink.roomPushed(r);
        else sink.bindingEnded(r);
        return;
      }
      case RecordKind.SpotEvent:
        return this.parts.multicast.receive(r, record.from);
      case RecordKind.TopicBarrier:
      case RecordKind.TopicBarrierAck:
        return this.parts.multicast.barrier(r, record.from);
      case RecordKind.RelocationChunk:
      case RecordKind.RelocationReady:
      case RecordKind.RelocationRelay:
      case RecordKind.RelocationCutover:
      case RecordKind.RelocationCommit:
        if (this.parts.relocations) return this.parts.relocations.receive(r, record.from);
        events.emit({
          type: 'protocol_error',
          route: 'route-mesh',
          mesh,
          peerRid: record.from.rid,
          reason: `relocation record for '${r.relocationId}': this node holds no objects`,
        });
        return;
      default: {
        const { call, answer } = inboundCall(r, record.from.rid, link, events, mesh, record.bytes);
        // A node that holds no objects is never the current owner of any.
        if (!host) return answer.error(staleRoute(self.rid, call));
        // A call on a route this node no longer holds may follow its object, or wait for one arriving.
        host.dispatch(call, answer, this.parts.moved, record.from);
      }
    }
  }
}
