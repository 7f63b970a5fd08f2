import { ZLinkError, errorMessage } from '../../core/errors.js';
import { RecordKind } from '../../core/wire/index.js';
import type { AuthorityRecord, PeerAddress, StoreVersion } from '../../core/ports/index.js';
import {
  ChunkAssembly,
  type ObjectRouteFences,
  type RelocationChunkRecord,
  type RelocationCutoverRecord,
  type RelocationImage,
  type RelocationRefusal,
  decodeRelocationImage,
  encodeRelocationCommit,
  encodeRelocationReady,
} from '../wire/index.js';
import {
  type Activation,
  type HeldAuthority,
  inboundCall,
  type InboundObjectCall,
  type ObjectAnswer,
  readCallRecord,
} from '../owner/index.js';
import { type MoveContext, RELOCATION_MAX_IMAGE_BYTES, refusalOf } from './move-context.js';
import { carriedEvent } from '../multicast/index.js';
import { TARGET_WAIT_MS } from '../timing/index.js';

interface Carried {
  readonly call: InboundObjectCall;
  readonly answer: ObjectAnswer;
}

/**
 * The target of one move, as phases: `receiving` the image's chunks; `restoring` (the instance built,
 * `restore(state)` run, nothing dispatched); `ready` (relay-ready told, the source's relays gather in
 * the temporary queue, registered before the instance was made); `cutting` (the source's go came: the
 * authority CAS, which only the target writes); `open` (the object is Ready here: the calls it brought,
 * then the temporary queue, then whatever comes); `ended` (given up: nothing kept, every carried call
 * answered). The target never takes the authority without the source's go, so a source that gave the
 * move up never meets a second copy.
 */
export class IncomingMove {
  private phase: 'receiving' | 'restoring' | 'ready' | 'cutting' | 'open' | 'ended' = 'receiving';
  private readonly assembly: ChunkAssembly;
  /**
   * In order: calls sent straight here (read), and the source's relays, read once the CAS is on its way (see
   * `cutover`).
   */
  private readonly temporary: (Carried | Uint8Array)[] = [];
  private image: RelocationImage | undefined;
  private activation: Activation | undefined;
  private arrivedAt = 0;
  /**
   * Until the source's go: a source gone silent (no go, no refusal, no peer-down) leaves nothing held here.
   */
  private readonly wait: ReturnType<typeof setTimeout>;
  private settledOnce!: () => void;
  /** Settles once the move opened here or was given up. */
  readonly settled = new Promise<void>((resolve) => (this.settledOnce = resolve));

  constructor(
    private readonly ctx: MoveContext,
    readonly relocationId: string,
    readonly source: PeerAddress,
    /** Told once, when the move opened here or was given up: its late relays are still expected a while. */
    private readonly onSettled: (move: IncomingMove) => void,
  ) {
    this.assembly = new ChunkAssembly(relocationId, RELOCATION_MAX_IMAGE_BYTES);
    this.wait = setTimeout(() => {
      if (this.phase !== 'cutting' && this.phase !== 'open') this.refuse(refusalOf('Timeout', 'no go came'));
    }, TARGET_WAIT_MS);
    this.wait.unref();
  }

  /** Whether the move is past the source's go here: the authority may be, or become, this node's. */
  get pastGo(): boolean {
    return this.phase === 'cutting';
  }

  chunk(r: RelocationChunkRecord): void {
    if (this.phase !== 'receiving') return;
    const step = this.assembly.add(r);
    if (step.tag === 'more') return;
    if (step.tag === 'failed') return this.refuse(refusalOf('ProtocolError', step.reason));
    const image = decodeRelocationImage(step.image);
    if (typeof image === 'string') return this.refuse(refusalOf('ProtocolError', image));
    this.image = image;
    this.ctx.host.moves.arrival(image.objectKind, image.id, true);
    this.arrivedAt = this.ctx.clock.now();
    this.phase = 'restoring';
    void this.restore(image);
  }

  /** A call the source held or received after its seal: queued until the object opens here, then run. */
  relay(bytes: Uint8Array): void {
    if (this.phase === 'open') {
      const carried = this.carry(bytes);
      if (carried) this.ctx.host.moves.run(this.activation as Activation, carried.call, carried.answer);
      return;
    }
    if (this.phase === 'ready' || this.phase === 'cutting') return void this.temporary.push(bytes);
    // Given up: the source runs what it relayed, once it learns so (it keeps a copy until the commit).
  }

  /**
   * A call sent straight here on the route this move is taking the object under (its sender read the
   * record the target's CAS wrote, before the object opened here): it waits in the temporary queue,
   * behind what the source relayed, instead of being refused as stale (a send would be lost).
   */
  takes(call: InboundObjectCall, answer: ObjectAnswer): boolean {
    const a = this.activation;
    if ((this.phase !== 'ready' && this.phase !== 'cutting') || a === undefined) return false;
    if (call.objectKind !== a.key.kind || call.id !== a.key.id || !a.heldOn(this.ctx.self, call.fences))
      return false;
    this.temporary.push({ call, answer });
    return true;
  }

  /** The source's go (take the authority) or its giving up. */
  cutover(r: RelocationCutoverRecord): void {
    if (r.refusal !== undefined) {
      if (this.phase !== 'cutting' && this.phase !== 'open') this.end(r.refusal.message);
      return;
    }
    if (this.phase !== 'ready') return;
    this.phase = 'cutting';
    void this.takeAuthority();
    // The object is paused until the CAS lands: the relays, which came just before this go, are read
    // while the CAS travels to the store and back, not before it leaves.
    this.readTemporary();
  }

  /**
   * Reads the relays the temporary queue keeps as bytes into calls, in place and in order (one that is not a
   * call is reported and dropped).
   */
  private readTemporary(): void {
    let kept = 0;
    for (const entry of this.temporary) {
      const carried = entry instanceof Uint8Array ? this.carry(entry) : entry;
      if (carried !== undefined) this.temporary[kept++] = carried;
    }
    this.temporary.length = kept;
  }

  /**
   * The source left the mesh: a move not past its go is dropped (the source held the authority). What
   * it relayed is not answered here: a source that was only silent (stopped, slow) runs its copies
   * itself once it settles the move, and callers of one that died learn it from its own loss.
   */
  sourceLost(): void {
    if (this.phase === 'cutting' || this.phase === 'open') return;
    this.end(`the source '${this.source.rid}' was lost`);
  }

  /** This node is closing: a move not past its go is given up, the source told (it keeps the object). */
  close(): void {
    if (this.phase !== 'cutting' && this.phase !== 'open')
      this.refuse(refusalOf('Shutdown', 'the target is closing'));
  }

  private async restore(image: RelocationImage): Promise<void> {
    const { ctx } = this;
    const what = `relocate ${image.objectKind} '${image.id}'`;
    if (ctx.host.fenced)
      return this.refuse(refusalOf('Rejected', `${what}: this node's owner lease is fenced`));
    const held: HeldAuthority = {
      objectGeneration: image.objectGeneration,
      authorityOwnerGeneration: image.source.authorityOwnerGeneration + 1,
      ownerLeaseGeneration: ctx.leaseGeneration(),
      storeVersion: image.storeVersion,
    };
    let a: Activation;
    try {
      a = await ctx.host.moves.restore(image, held, what);
    } catch (error) {
      const code = error instanceof ZLinkError ? error.code : 'RemoteError';
      return this.refuse(refusalOf(code, errorMessage(error)));
    }
    this.activation = a;
    if (this.phase !== 'restoring') return void ctx.host.moves.drop(a, 'its move was given up');
    // A subscribed Spot's topics are advertised here, and every peer has read that, before the source
    // is told: from then on each publisher sends its events here too (the source holds the earlier ones).
    await ctx.multicast?.arrive(a);
    if (this.phase !== 'restoring') return;
    this.phase = 'ready';
    if (!ctx.link.answer(this.source.rid, encodeRelocationReady(this.relocationId))) this.sourceLost();
  }

  /** The route the object is held on here once the CAS landed. */
  private fences(): ObjectRouteFences {
    const { authority } = this.activation as Activation;
    return {
      owner: this.ctx.self,
      objectGeneration: authority.objectGeneration,
      authorityOwnerGeneration: authority.authorityOwnerGeneration,
      ownerLeaseGeneration: authority.ownerLeaseGeneration,
    };
  }

  /**
   * The target-only CAS of the authority, expecting the version the source held. A CAS whose answer
   * was lost is settled by reading the record (ours: it landed) until the store answers; a record that
   * changed otherwise ends the move: the temporary queue is answered `Unavailable`, the source resumes.
   */
  private async takeAuthority(): Promise<void> {
    const { ctx } = this;
    const image = this.image as RelocationImage;
    const a = this.activation as Activation;
    const fences = this.fences();
    const next: AuthorityRecord = {
      type: image.type,
      state: 'ready',
      owner: ctx.self,
      objectGeneration: fences.objectGeneration,
      authorityOwnerGeneration: fences.authorityOwnerGeneration,
      ownerLeaseGeneration: fences.ownerLeaseGeneration,
    };
    const ours = (r: AuthorityRecord | undefined): boolean =>
      r !== undefined &&
      r.owner.rid === ctx.self.rid &&
      r.owner.nodeGeneration === ctx.self.nodeGeneration &&
      r.authorityOwnerGeneration === next.authorityOwnerGeneration;
    for (let wait = 25, unknown = false; ; wait = Math.min(wait * 2, 1000)) {
      if (this.phase !== 'cutting') return;
      try {
        if (unknown) {
          // The last CAS may have landed: the record says, before anything else is decided.
          const stored = await ctx.store.get(a.key);
          if (ours(stored?.record)) return this.openHere((stored as { version: StoreVersion }).version);
          if (stored?.version !== image.storeVersion)
            return this.giveUp(refusalOf('Unavailable', 'the authority changed during the move'));
        }
        if (ctx.host.fenced)
          return this.giveUp(refusalOf('Rejected', "the target's owner lease is fenced: it commits no move"));
        const cas = await ctx.store.compareAndSet(a.key, image.storeVersion, next);
        if (cas.ok) return this.openHere(cas.version);
        if (ours(cas.current?.record))
          return this.openHere((cas.current as { version: StoreVersion }).version);
        return this.giveUp(refusalOf('Unavailable', 'the authority changed during the move'));
      } catch {
        unknown = true;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /**
   * Cutover: Ready here, the calls it brought first, then the temporary queue, then the commit to the source.
   */
  private openHere(version: StoreVersion): void {
    if (this.phase !== 'cutting') return;
    const { ctx } = this;
    const image = this.image as RelocationImage;
    const a = this.activation as Activation;
    ctx.host.moves.adopt(a, version, image.timers, ctx.clock.now() - this.arrivedAt);
    ctx.host.moves.arrival(image.objectKind, image.id, false);
    // Not needed once open; a lingering entry should not hold the moved state.
    this.image = undefined;
    this.phase = 'open';
    for (const bytes of image.queued) {
      const carried = this.carry(bytes);
      if (carried) ctx.host.moves.run(a, carried.call, carried.answer);
    }
    this.readTemporary();
    for (const c of this.temporary.splice(0) as Carried[]) ctx.host.moves.run(a, c.call, c.answer);
    // Behind everything the source carried: an event that came both ways runs once (`EventOrder`).
    ctx.multicast?.opened(a);
    ctx.link.answer(this.source.rid, encodeRelocationCommit(this.relocationId, { target: this.fences() }));
    // Dispatch is open here: each bound session gets the new route (docs/protocol.md#bound-actors-that-move).
    ctx.sessions?.route(a, this.relocationId, 'commit');
    ctx.events.emit({
      type: 'object_relocation',
      phase: 'opened',
      mesh: ctx.mesh,
      objectKind: a.key.kind,
      id: a.key.id,
      relocationId: this.relocationId,
      peerRid: this.source.rid,
    });
    clearTimeout(this.wait);
    this.settledOnce();
    this.onSettled(this);
  }

  /**
   * Gives the move up before the go: the source is told (a refused relay-ready before it relays, a
   * refused commit once it does) and resumes with the object; nothing was taken from it.
   */
  private refuse(refusal: RelocationRefusal): void {
    if (this.phase === 'ended' || this.phase === 'open') return;
    const record =
      this.phase === 'ready'
        ? encodeRelocationCommit(this.relocationId, { refusal })
        : encodeRelocationReady(this.relocationId, refusal);
    this.ctx.link.answer(this.source.rid, record);
    this.end(refusal.message);
  }

  /**
   * After the go, without the authority: the source resumes, and runs what it relayed here itself
   * (it kept each until the commit), so nothing carried is answered here.
   */
  private giveUp(refusal: RelocationRefusal): void {
    this.ctx.link.answer(this.source.rid, encodeRelocationCommit(this.relocationId, { refusal }));
    this.end(refusal.message);
  }

  private end(reason: string): void {
    if (this.phase === 'ended' || this.phase === 'open') return;
    this.phase = 'ended';
    clearTimeout(this.wait);
    this.temporary.length = 0;
    if (this.image !== undefined) this.ctx.host.moves.arrival(this.image.objectKind, this.image.id, false);
    if (this.activation !== undefined) {
      this.ctx.multicast?.abandoned(this.activation);
      void this.ctx.host.moves.drop(this.activation, reason);
    }
    this.settledOnce();
    this.onSettled(this);
  }

  /**
   * A record the move carried as a call of the object and its answer: a send or request as any call
   * off the wire, an event as Logical Multicast counts it; `undefined` (reported) when it is not one.
   */
  private carry(bytes: Uint8Array): Carried | undefined {
    const r = readCallRecord(bytes);
    if (typeof r === 'string') return void this.report(r);
    const { ctx } = this;
    if (r.kind !== RecordKind.SpotEvent)
      return inboundCall(r, this.source.rid, ctx.link, ctx.events, ctx.mesh, bytes);
    const a = this.activation;
    const carried = a && carriedEvent(ctx, a, r);
    if (!carried) this.report(`a moved event for '${r.carried.spotId}' is not this move's object`);
    return carried;
  }

  private report(reason: string): void {
    this.ctx.events.emit({
      type: 'protocol_error',
      route: 'route-mesh',
      mesh: this.ctx.mesh,
      peerRid: this.source.rid,
      reason: `relocation '${this.relocationId}': ${reason}`,
    });
  }
}
