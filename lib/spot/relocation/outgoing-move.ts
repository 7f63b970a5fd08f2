import { ZLinkError, errorMessage } from '../../core/errors.js';
import type { PeerAddress, RelocationEnd } from '../../core/ports/index.js';
import { CUTOVER_DEADLINE_MS } from '../../core/options/index.js';
import {
  type ObjectRouteFences,
  type RelocationCommitRecord,
  type RelocationReadyRecord,
  type RelocationRefusal,
  encodeRelocationChunks,
  encodeRelocationCutover,
  encodeRelocationImage,
  encodeRelocationRelay,
} from '../wire/index.js';
import {
  type Activation,
  type InboundObjectCall,
  type ObjectAnswer,
  heldRoute,
  objectRef,
} from '../owner/index.js';
import { callRecord, captureActivation } from './capture.js';
import { SESSION_SEAL_REPLY_MS } from '../timing/index.js';
import {
  type MoveContext,
  RELOCATION_CHUNK_BYTES,
  type RelocationResult,
  refusalOf,
  unreachable,
} from './move-context.js';

interface Held {
  readonly call: InboundObjectCall;
  readonly answer: ObjectAnswer;
  /** Relayed to the target (its answer comes from there once the target opens). */
  sent: boolean;
}

/**
 * The source of one move (docs/protocol.md#relocation-steps; docs/decisions.md "Relocation flow"), as phases:
 *
 * - `capturing`: the object's ingress is this move's hold and its turns seal after the running one;
 *   `capture()`, the waiting calls and the timers become the image.
 * - `transferring`: the image went to the target in chunks; waiting for its relay-ready.
 * - `relaying`: the target restored it; the hold went to it in order, then the go (cutover), and every
 *   later arrival follows — each kept here too until the commit, so a move the target gives up loses
 *   none of them: they run here, in order, after the object's own queue.
 * - `resuming`: the move is off and the object unseals once its capture has ended (arrivals still wait
 *   in the hold, behind the queue); `committed`: the object runs on the target, arrivals are relayed.
 *
 * Nothing is taken away before the commit, so an abort loses nothing and runs nothing twice; the
 * target runs nothing before it holds the authority, and it takes it only after the go.
 */
export class OutgoingMove {
  private phase: 'capturing' | 'transferring' | 'relaying' | 'resuming' | 'committed' = 'capturing';
  /** What arrived after the seal and was not relayed: in arrival order. */
  private readonly held: Held[] = [];
  /** What was relayed (or tried) since relay-ready: replayed here if the move does not commit. */
  private readonly relayed: Held[] = [];
  private source: ObjectRouteFences | undefined;
  private capturing: Promise<unknown> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private settling = false;
  private sealedAt = 0;
  private committedTo: ObjectRouteFences | undefined;
  /** Bindings of the object were sealed for this move: an abort gives them their old route back. */
  private sessionsSealed = false;
  private settle!: (result: RelocationResult) => void;
  /** Ends once the move did: committed or aborted. Never rejects. */
  readonly done: Promise<RelocationResult>;

  constructor(
    private readonly ctx: MoveContext,
    readonly relocationId: string,
    readonly a: Activation,
    readonly target: PeerAddress,
    timeoutMs: number,
  ) {
    this.done = new Promise((resolve) => (this.settle = resolve));
    this.timer = setTimeout(
      () => this.abort(refusalOf('Timeout', `the target did not restore the object within ${timeoutMs} ms`)),
      timeoutMs,
    );
  }

  /** Seals the bound sessions, then the object; captures and sends the image. */
  async start(): Promise<void> {
    const { a, ctx } = this;
    if (a.sessions !== undefined && a.sessions.size > 0 && ctx.sessions !== undefined) {
      // Sessions first (docs/protocol.md#bound-actors-that-move): once each owner answered, everything it
      // relayed before is here.
      this.sessionsSealed = true;
      try {
        await ctx.sessions.seal(a, this.relocationId, SESSION_SEAL_REPLY_MS);
      } catch (error) {
        return this.abort(refusalOf('Unavailable', `a bound session was not sealed: ${errorMessage(error)}`));
      }
      if (this.phase !== 'capturing') return;
    }
    // From here every call admitted on the object's route is held, in order, behind its queue.
    a.ingress = (call, answer) => this.arrived(call, answer);
    this.sealedAt = ctx.clock.now();
    const captured = captureActivation(a, ctx.self, () => this.phase === 'capturing');
    this.capturing = captured.catch(() => undefined);
    let image;
    try {
      image = await captured;
    } catch (error) {
      const code = error instanceof ZLinkError ? error.code : 'RemoteError';
      return this.abort(refusalOf(code, errorMessage(error)));
    }
    if (this.phase !== 'capturing' || image === undefined) return;
    this.source = image.source;
    const chunks = encodeRelocationChunks(
      this.relocationId,
      encodeRelocationImage(image),
      RELOCATION_CHUNK_BYTES,
    );
    this.phase = 'transferring';
    for (const chunk of chunks)
      if (!ctx.link.answer(this.target.rid, chunk))
        return this.abort(refusalOf('Unavailable', `the target '${this.target.rid}' is not a ready peer`));
  }

  /** The target's relay-ready: the hold goes to it, then the go. */
  ready(r: RelocationReadyRecord): void {
    if (this.phase !== 'transferring') return;
    if (r.refusal !== undefined) return this.abort(r.refusal, false);
    clearTimeout(this.timer);
    this.phase = 'relaying';
    this.emit('relayReady');
    for (const h of this.held.splice(0)) this.relay(h);
    // A subscribed Spot goes once all its publishers sent before they learned of the target is here.
    const flushed = this.ctx.multicast?.flush(this.a);
    if (flushed === undefined) return this.go();
    void flushed.then(() => this.phase === 'relaying' && this.go());
  }

  /** The go: the hold is relayed, the target may take the authority. */
  private go(): void {
    if (!this.ctx.link.answer(this.target.rid, encodeRelocationCutover(this.relocationId)))
      return this.targetLost();
    // The commit follows within a store write, at the latest by the cutover deadline; past it the
    // store says how the move ended.
    this.timer = setTimeout(() => void this.settleByStore(), CUTOVER_DEADLINE_MS);
  }

  /** The target's end of the move: it holds the object now, or it gave the move up. */
  committed(r: RelocationCommitRecord): void {
    if (this.phase !== 'relaying') return;
    // The target's word after the go: the authority may have changed under the object meanwhile.
    if (r.refusal !== undefined) return this.resume(r.refusal, true);
    if (this.isTargetRoute(r.target)) this.finish(r.target);
  }

  /**
   * Whether `fences` are the ones this move's target takes the object under (its run, one owner generation
   * on).
   */
  private isTargetRoute(fences: ObjectRouteFences): boolean {
    const { authority } = this.a;
    return (
      fences.owner.rid === this.target.rid &&
      fences.owner.nodeGeneration === this.target.generation &&
      fences.objectGeneration === authority.objectGeneration &&
      fences.authorityOwnerGeneration === authority.authorityOwnerGeneration + 1
    );
  }

  /**
   * The target left the mesh. Before the go the move aborts; after it, the store tells whether it committed.
   */
  targetLost(): void {
    if (this.phase === 'capturing' || this.phase === 'transferring')
      return this.abort(
        refusalOf('Unavailable', `the target '${this.target.rid}' was lost before it restored`),
      );
    if (this.phase === 'relaying') void this.settleByStore();
  }

  /** The target's side as the move's record keeps it: its fences once committed. */
  targetEnd(): RelocationEnd {
    const to = this.committedTo;
    return {
      rid: this.target.rid,
      nodeGeneration: this.target.generation,
      authorityOwnerGeneration: to?.authorityOwnerGeneration ?? 0,
      ownerLeaseGeneration: to?.ownerLeaseGeneration ?? 0,
    };
  }

  private emit(
    phase: 'relayReady' | 'committed' | 'aborted',
    extra: { readonly pauseMs?: number; readonly reason?: string } = {},
  ): void {
    const { a, ctx } = this;
    ctx.events.emit({
      type: 'object_relocation',
      phase,
      mesh: ctx.mesh,
      objectKind: a.key.kind,
      id: a.key.id,
      relocationId: this.relocationId,
      peerRid: this.target.rid,
      ...extra,
    });
  }

  /** This node is closing: a move not yet at its go is given up (the object stays and closes here). */
  cancel(reason: string): void {
    if (this.phase === 'capturing' || this.phase === 'transferring')
      this.abort(refusalOf('Shutdown', reason));
  }

  private arrived(call: InboundObjectCall, answer: ObjectAnswer): void {
    const h: Held = { call, answer, sent: false };
    if (this.phase === 'relaying' || this.phase === 'committed') return this.relay(h);
    // The hold is the object's queue continued: bounded as it is.
    if (this.held.length + this.a.turns.depth >= this.a.turns.queueLimit)
      return answer.error({
        code: 'ObjectRefused',
        message: `${call.objectKind} '${call.id}': the object queue is full while it moves`,
        details: { reason: 'queueFull' },
      });
    this.held.push(h);
  }

  /** One call on to the target's temporary queue (its answer travels from there, on its reply route). */
  private relay(h: Held): void {
    this.ctx.relayed();
    h.sent = this.ctx.link.answer(
      this.target.rid,
      encodeRelocationRelay(this.relocationId, callRecord(h.call)),
    );
    if (this.phase === 'relaying') this.relayed.push(h);
    else if (!h.sent) unreachable(h);
  }

  /**
   * Gives the move up before the go: the target is told (when it still can be) to drop what it
   * restored; the object unseals here and runs its hold after its queue.
   */
  private abort(refusal: RelocationRefusal, tellTarget = true): void {
    if (this.phase !== 'capturing' && this.phase !== 'transferring') return;
    if (tellTarget)
      this.ctx.link.answer(this.target.rid, encodeRelocationCutover(this.relocationId, refusal));
    this.resume(refusal);
  }

  /**
   * The object goes on here: unsealed once its capture (user code) has ended, then what was relayed
   * and what was held, in the order it arrived — already accepted, so past the queue limit. `verify`
   * (the move ended after its go, or this node's lease was fenced during it and another node may have
   * taken the object): the record is read first, and an object this run no longer holds ends here,
   * its carried calls never run.
   */
  private resume(refusal: RelocationRefusal, verify = false): void {
    this.phase = 'resuming';
    clearTimeout(this.timer);
    const { a } = this;
    // The object goes on here: its sessions relay to it on the route they kept (44 abort).
    if (this.sessionsSealed) this.ctx.sessions?.route(a, this.relocationId, 'abort');
    void this.capturing.then(async () => {
      if ((verify || a.revalidate) && !(await this.stillHeld())) {
        return this.lostHere('another node holds it now', {
          code: 'Unavailable',
          message: 'another node holds the object now',
        });
      }
      a.revalidate = false;
      a.ingress = undefined;
      a.turns.unseal();
      for (const h of [...this.relayed.splice(0), ...this.held.splice(0)])
        this.ctx.host.moves.run(a, h.call, h.answer);
      this.end(refusal);
    });
  }

  /**
   * Whether the record still names this run as the owner of this incarnation (read until the store answers).
   */
  private async stillHeld(): Promise<boolean> {
    for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
      try {
        const stored = await this.ctx.store.get(this.a.key);
        return this.a.heldIn(stored?.record, this.ctx.self);
      } catch {
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /**
   * The object is no longer this run's (taken over, destroyed, moved on without a word): it ends here,
   * what never left here ends `Unavailable`, what was relayed is the other side's or its deadline's.
   */
  private async lostHere(detail: string, refusal: RelocationRefusal): Promise<void> {
    this.phase = 'committed';
    for (const h of [...this.relayed.splice(0), ...this.held.splice(0)]) if (!h.sent) unreachable(h);
    await this.ctx.host.moves.drop(this.a, detail);
    this.end(refusal);
  }

  private end(refusal: RelocationRefusal): void {
    this.emit('aborted', { reason: `${refusal.code}: ${refusal.message}` });
    this.settle({ outcome: 'aborted', code: refusal.code, reason: refusal.message });
  }

  /**
   * Committed: the follow route goes in before the activation leaves, so a call on the old route is
   * relayed either way (held arrivals still go as relays until the table lets it go).
   */
  private finish(target: ObjectRouteFences): void {
    this.phase = 'committed';
    this.committedTo = target;
    clearTimeout(this.timer);
    const { a, ctx } = this;
    const pauseMs = ctx.clock.now() - this.sealedAt;
    this.emit('committed', { pauseMs });
    // The target answers what reached it; what never left here ends here.
    for (const h of this.relayed.splice(0)) if (!h.sent) unreachable(h);
    const source = this.source ?? heldRoute(a, ctx.self);
    // Checked by `isTargetRoute`; the follow route's own rule is the same, so it cannot refuse it.
    ctx.followRoutes.install(a.key, source, target);
    ctx.movedAway(a.key.kind, a.key.id, source);
    void ctx.host.moves.relinquish(a);
    this.settle({
      outcome: 'committed',
      owner: target.owner.rid,
      ref: objectRef(a.key, a.cls.type, a.authority.objectGeneration, target.owner.rid),
      pauseMs,
    });
  }

  /**
   * The target landed and the object has moved on since (its commit never came): the calls it took
   * were answered over there, so they go without a word from here, and no follow route is installed
   * (its fences are not known here; the nodes after it relay for themselves).
   */
  private handedOn(): void {
    this.phase = 'committed';
    clearTimeout(this.timer);
    const { a, ctx } = this;
    for (const h of this.relayed.splice(0)) if (!h.sent) unreachable(h);
    ctx.movedAway(a.key.kind, a.key.id, this.source ?? heldRoute(a, ctx.self));
    void ctx.host.moves.relinquish(a);
    this.settle({
      outcome: 'committed',
      owner: this.target.rid,
      ref: objectRef(a.key, a.cls.type, a.authority.objectGeneration, this.target.rid),
      pauseMs: ctx.clock.now() - this.sealedAt,
    });
  }

  /**
   * After the go, without a commit (the target lost, or silent): its CAS may or may not have landed.
   * The store says which — read until it answers. The target's: committed. Still ours at the version
   * we hold: a CAS of our own fences a late one of the target's, and the move is off (what was relayed
   * runs here: the target runs nothing before it holds the authority). Neither's (destroyed or taken
   * over meanwhile): the object ends here too, and what it carried ends `Unavailable`.
   */
  private async settleByStore(): Promise<void> {
    if (this.settling) return;
    this.settling = true;
    const { a, ctx } = this;
    const lost = refusalOf('Unavailable', `the target '${this.target.rid}' did not commit the move`);
    for (let wait = 50; this.phase === 'relaying'; wait = Math.min(wait * 2, 1000)) {
      try {
        const stored = await ctx.store.get(a.key);
        if (this.phase !== 'relaying') return;
        const record = stored?.record;
        const landed = record && {
          owner: record.owner,
          objectGeneration: record.objectGeneration,
          authorityOwnerGeneration: record.authorityOwnerGeneration,
          ownerLeaseGeneration: record.ownerLeaseGeneration,
        };
        if (landed !== undefined && this.isTargetRoute(landed)) return this.finish(landed);
        if (
          record !== undefined &&
          record.objectGeneration === a.authority.objectGeneration &&
          record.authorityOwnerGeneration > a.authority.authorityOwnerGeneration + 1
        )
          return this.handedOn();
        if (stored === undefined || !a.heldIn(record, ctx.self)) {
          return this.lostHere('its record changed during a move', lost);
        }
        const kept = await ctx.store.compareAndSet(a.key, stored.version, stored.record);
        // Landed or not, what the store holds now is what the next write of this object must expect.
        if (kept.ok) a.authority = { ...a.authority, storeVersion: kept.version };
        if (this.phase !== 'relaying') return;
        if (!kept.ok) continue;
        return this.resume(lost);
      } catch {
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }
}
