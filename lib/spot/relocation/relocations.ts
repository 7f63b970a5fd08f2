import { ZLinkError, configurationError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import { RecordKind } from '../../core/wire/index.js';
import type { PeerAddress } from '../../core/ports/index.js';
import { type RelocationChunkRecord, type RelocationStepRecord } from '../wire/index.js';
import {
  type Activation,
  type InboundObjectCall,
  type ObjectAnswer,
  staleRef,
  within,
} from '../owner/index.js';
import type { Placement } from '../resolve/index.js';
import { drainNode } from './drain-moves.js';
import { IncomingMove } from './incoming-move.js';
import { memberMove } from './member-moves.js';
import { MoveRecord } from './move-records.js';
import { type MoveContext, type MoveRequest, type RelocationResult, abortedBy } from './move-context.js';
import { OutgoingMove } from './outgoing-move.js';
import { INCOMING_LINGER_MS } from '../timing/index.js';

/** What a move needs beyond the shared context: where objects may go. */
export interface RelocationsConfig extends MoveContext {
  readonly placement: Placement;
  /** Asks `owner` to move its object (ObjectControl `relocate`): a Spot's member brought back beside it. */
  readonly moveAt: (owner: string, req: MoveRequest, type: string) => Promise<RelocationResult>;
}

/**
 * The moves of one node, both ways (docs/protocol.md#relocation-steps): `move` starts one of an object held
 * here; the records of moves (66–70) reach the move they name, only from the peer at its other end.
 * One move at a time per object.
 */
export class Relocations {
  private readonly outgoing = new Map<string, OutgoingMove>();
  private readonly incoming = new Map<string, IncomingMove>();
  private moves = 0;
  /** Moves away from this node that committed (a drain after none needs no leave barrier). */
  private movedAway = 0;
  /** Objects whose move is writing its first record: a second move of one is refused meanwhile. */
  private readonly starting = new Set<Activation>();
  private closed = false;

  constructor(private readonly config: RelocationsConfig) {}

  /**
   * Moves the object held here to another object server and ends with how it went: `committed` (the
   * new owner) or `aborted` (the reason; the object goes on here). Rejects, nothing moved: `NotFound`
   * (not held here, no server to move to, or `target` is not a ready server hosting the type),
   * `InvalidOperation` (a ref of another incarnation, a class that is not relocatable, `target` is
   * this node, a member Actor moved away from its Spot — see `memberMove`), `Unavailable` (not Ready,
   * or already moving), `Rejected` (this node's lease is fenced), `Shutdown`.
   */
  async move(req: MoveRequest): Promise<RelocationResult> {
    const { host, store, mesh } = this.config;
    const a = host.get(req.kind, req.id);
    if (a !== undefined && req.kind === 'spot' && a.membership.joined.size > 0) return this.moveGroup(req, a);
    const checked = req.forGroup ? req : await memberMove(host, store, mesh, req);
    return this.finish(await this.start(checked));
  }

  /**
   * A Spot with members moves with those held here (docs/protocol.md#message-follow, PerActor User Spot): one
   * target for all, each object its own move — its own hold and temporary queue, its own authority CAS
   * and cutover — so `toSpot` follows the Spot's authority and `toActor` each Actor's own. The members'
   * moves start only once the Spot's has (a refused Spot move moves nobody). A member left apart (its
   * move aborted while the Spot's committed, or the reverse) gets one more move to where the Spot is;
   * the result lists where each member ended.
   */
  private async moveGroup(req: MoveRequest, spot: Activation): Promise<RelocationResult> {
    const what = `relocate spot '${req.id}'`;
    const target = this.pickTarget(req, spot.cls.type, what);
    if (target instanceof ZLinkError) throw target;
    const { host, self } = this.config;
    const members = [...spot.membership.joined.keys()]
      .map((id) => host.get('actor', id))
      .filter((m): m is Activation => m !== undefined && m.state === 'ready' && m.ingress === undefined);
    const memberReq = (m: Activation, to: string): MoveRequest => ({
      kind: 'actor',
      id: m.key.id,
      objectGeneration: m.authority.objectGeneration,
      target: to,
      timeoutMs: req.timeoutMs,
    });
    const spotMove = await this.start({ ...req, target: target.rid });
    const memberMoves = members.map((m) =>
      this.start(memberReq(m, target.rid)).then(
        (started) => this.finish(started),
        (error: unknown) => abortedBy(error),
      ),
    );
    const [result, ...moved] = await Promise.all([this.finish(spotMove), ...memberMoves]);
    const spotOwner = result.outcome === 'committed' ? result.owner : self.rid;
    const placed = await Promise.all(
      members.map(async (m, i) => {
        let owner = (moved[i] as RelocationResult).outcome === 'committed' ? target.rid : self.rid;
        if (owner !== spotOwner) {
          const again =
            owner === self.rid
              ? await this.move({ ...memberReq(m, spotOwner), forGroup: true }).catch(abortedBy)
              : await this.config.moveAt(owner, memberReq(m, spotOwner), m.cls.type).catch(abortedBy);
          if (again.outcome === 'committed') owner = again.owner;
        }
        return { id: m.key.id, owner, withSpot: owner === spotOwner };
      }),
    );
    return { ...result, members: placed };
  }

  /** Checks, writes the move's first record and starts it (sealing the object); `finish` awaits its end. */
  private async start(
    req: MoveRequest,
  ): Promise<{ readonly move: OutgoingMove; readonly record: MoveRecord }> {
    const { host, self } = this.config;
    const what = `relocate ${req.kind} '${req.id}'`;
    if (this.closed) throw new ZLinkError('Shutdown', `${what}: the runtime is closing`);
    const a = host.get(req.kind, req.id);
    if (a === undefined) throw new ZLinkError('NotFound', `${what}: node '${self.rid}' does not hold it`);
    if (req.objectGeneration !== undefined && req.objectGeneration !== a.authority.objectGeneration)
      throw staleRef(what, req.objectGeneration, a.authority.objectGeneration);
    const cls = host.moves.relocatableClass(req.kind, a.cls.type, what);
    if (cls instanceof ZLinkError) throw cls;
    const moving = a.ingress !== undefined || this.starting.has(a);
    if (a.state !== 'ready' || moving)
      throw new ZLinkError('Unavailable', `${what}: the object is ${moving ? 'already moving' : a.state}`, {
        details: { reason: moving ? 'relocating' : a.state },
      });
    if (host.fenced) throw new ZLinkError('Rejected', `${what}: the owner lease is fenced: no move starts`);
    const target = this.pickTarget(req, a.cls.type, what);
    if (target instanceof ZLinkError) throw target;
    const { relocationStore } = this.config;
    // Startup refuses a relocatable class without one; a class registered later is refused here.
    if (relocationStore === undefined)
      throw configurationError('relocationStore', `${what}: no Relocation Store is registered`);
    const relocationId = `${self.nodeGeneration}:${++this.moves}`;
    // Its record first, before anything is sealed: a store that cannot take it stops the move here.
    this.starting.add(a);
    let record: MoveRecord;
    try {
      record = await MoveRecord.open(relocationStore, a.key, {
        relocationId,
        type: a.cls.type,
        state: 'preparing',
        objectGeneration: a.authority.objectGeneration,
        source: { ...self, ...a.authority },
        target: {
          rid: target.rid,
          nodeGeneration: target.generation,
          authorityOwnerGeneration: 0,
          ownerLeaseGeneration: 0,
        },
        followMs: 0,
      });
    } catch (error) {
      throw new ZLinkError('Unavailable', `${what}: the Relocation Store did not take the move's record`, {
        cause: error,
        details: { resolver: 'StoreFailure' },
      });
    } finally {
      this.starting.delete(a);
    }
    if (this.closed || a.state !== 'ready' || a.ingress !== undefined)
      throw new ZLinkError('Unavailable', `${what}: the object changed before its move began`, {
        details: { reason: 'changed' },
      });
    const move = new OutgoingMove(this.config, relocationId, a, target, req.timeoutMs);
    this.outgoing.set(relocationId, move);
    this.emit(a.key.kind, a.key.id, 'started', relocationId, target.rid);
    void move.start();
    return { move, record };
  }

  private async finish({ move, record }: { readonly move: OutgoingMove; readonly record: MoveRecord }) {
    const { relocationId } = move;
    const result = await move.done;
    this.outgoing.delete(relocationId);
    if (result.outcome === 'committed') this.movedAway++;
    const end = move.targetEnd();
    void record.close(result, end, this.config.followRoutes.followDurationMs, this.config.events);
    return result;
  }

  private emit(
    objectKind: ObjectKind,
    id: string,
    phase: 'started',
    relocationId: string,
    peerRid: string,
  ): void {
    this.config.events.emit({
      type: 'object_relocation',
      phase,
      mesh: this.config.mesh,
      objectKind,
      id,
      relocationId,
      peerRid,
    });
  }

  private pickTarget(req: MoveRequest, type: string, what: string): PeerAddress | ZLinkError {
    const { self } = this.config;
    if (req.target === self.rid)
      return new ZLinkError('InvalidOperation', `${what}: the object is already on '${self.rid}'`);
    const servers = this.config.placement.servers(req.kind, type).filter((p) => p.rid !== self.rid);
    if (req.target !== undefined) {
      const found = servers.find((p) => p.rid === req.target);
      return (
        found ??
        new ZLinkError(
          'NotFound',
          `${what}: node '${req.target}' is not a ready object server hosting ${req.kind} type '${type}'`,
        )
      );
    }
    if (servers.length === 0)
      return new ZLinkError(
        'NotFound',
        `${what}: no other ready object server hosts ${req.kind} type '${type}'`,
      );
    return this.config.placement.next(servers);
  }

  /**
   * A drain: no object moves here any more; with `relocate`, the objects that can move go to the other
   * object servers first (see `drainNode`).
   */
  drain(
    deadlineMs: number,
    relocate: boolean,
    lastRelayAt: () => number,
    leave: (timeoutMs: number) => Promise<void>,
  ): Promise<void> {
    const { host, clock, placement, self } = this.config;
    const deps = {
      host,
      clock,
      placement,
      self: self.rid,
      move: (req: MoveRequest) => this.move(req),
      movedAway: () => this.movedAway,
    };
    return drainNode(deps, deadlineMs, relocate, lastRelayAt, leave);
  }

  /**
   * A call on the route an object arriving here is taking (see `IncomingMove.takes`); whether one took it.
   */
  holdArriving(call: InboundObjectCall, answer: ObjectAnswer): boolean {
    if (!this.config.host.moves.isArriving(call.objectKind, call.id)) return false;
    for (const move of this.incoming.values()) if (move.takes(call, answer)) return true;
    return false;
  }

  /** A record of a move (66–70) from peer `from`; one that names no move of that peer is reported. */
  receive(r: RelocationChunkRecord | RelocationStepRecord, from: PeerAddress): void {
    switch (r.kind) {
      case RecordKind.RelocationChunk: {
        let move = this.incoming.get(r.relocationId);
        if (move === undefined && !this.closed) {
          move = new IncomingMove(this.config, r.relocationId, from, (m) => this.linger(m));
          this.incoming.set(r.relocationId, move);
        }
        if (move?.source.rid === from.rid) return move.chunk(r);
        break;
      }
      case RecordKind.RelocationRelay: {
        const move = this.incoming.get(r.relocationId);
        if (move?.source.rid === from.rid) return move.relay(r.record);
        // A call of a move this node no longer has (long over, or never began here).
        return this.unknownRelay(r.relocationId, from);
      }
      case RecordKind.RelocationCutover: {
        const move = this.incoming.get(r.relocationId);
        if (move?.source.rid === from.rid) return move.cutover(r);
        break;
      }
      case RecordKind.RelocationReady: {
        const move = this.outgoing.get(r.relocationId);
        if (move?.target.rid === from.rid) return move.ready(r);
        break;
      }
      case RecordKind.RelocationCommit: {
        const move = this.outgoing.get(r.relocationId);
        if (move?.target.rid === from.rid) return move.committed(r);
        break;
      }
    }
    this.config.events.emit({
      type: 'protocol_error',
      route: 'route-mesh',
      mesh: this.config.mesh,
      peerRid: from.rid,
      reason: `relocation record for '${r.relocationId}': no such move with that peer here`,
    });
  }

  /**
   * A peer left: moves with it at the other end go on without it (see the moves' `targetLost` /
   * `sourceLost`).
   */
  peerDown(rid: string): void {
    for (const move of this.outgoing.values()) if (move.target.rid === rid) move.targetLost();
    // A move past its go stays (the authority may be landing here); the others end, and linger a while.
    for (const move of this.incoming.values()) if (move.source.rid === rid) move.sourceLost();
  }

  /**
   * Stops: moves not yet at their go are given up (the objects stay where they were); those past it
   * are waited for, `timeoutMs` at most, so that an object whose authority is landing here or leaving
   * is settled before the host releases what it holds.
   */
  async close(timeoutMs: number): Promise<void> {
    this.closed = true;
    for (const move of this.outgoing.values()) move.cancel('the runtime is closing');
    for (const move of this.incoming.values()) move.close();
    const pending = [
      ...[...this.outgoing.values()].map((m) => m.done),
      ...[...this.incoming.values()].filter((m) => m.pastGo).map((m) => m.settled),
    ];
    if (pending.length > 0) await within(Promise.all(pending), timeoutMs);
    this.incoming.clear();
  }

  /**
   * A relay for a move this node no longer has (ended here, then forgotten): not answered — the source
   * keeps its copy until the move's end and runs it itself when it learns the move did not happen.
   */
  private unknownRelay(relocationId: string, from: PeerAddress): void {
    this.config.events.emit({
      type: 'protocol_error',
      route: 'route-mesh',
      mesh: this.config.mesh,
      peerRid: from.rid,
      reason: `relocation relay for '${relocationId}': no such move here`,
    });
  }

  /** Keeps a finished incoming move a while (late relays of its source still find it), then forgets it. */
  private linger(move: IncomingMove): void {
    setTimeout(() => {
      if (this.incoming.get(move.relocationId) === move) this.incoming.delete(move.relocationId);
    }, INCOMING_LINGER_MS).unref();
  }
}
