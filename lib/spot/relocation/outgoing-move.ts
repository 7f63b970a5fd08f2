import {
  type ObjectRouteFences,
  type PeerAddress,
  type RelocationCommitRecord,
  type RelocationReadyRecord,
  type RelocationRefusal,
  ZLinkError,
  encodeRelocationChunks,
  encodeRelocationCutover,
  encodeRelocationImage,
  encodeRelocationRelay,
  errorMessage,
} from '../../core/index.js';
import { type Activation, objectRef } from '../objects/activation.js';
import type { InboundObjectCall, ObjectAnswer } from '../objects/object-call.js';
import { callRecord, captureActivation, heldRoute } from './capture.js';
import {
  type MoveContext,
  RELOCATION_CHUNK_BYTES,
  type RelocationResult,
  refusalOf,
} from './move-context.js';

interface Held {
  readonly call: InboundObjectCall;
  readonly answer: ObjectAnswer;
}

/**
 * The source of one move (spot-actor-routing §2.5; docs/decisions.md "Relocation flow"), as phases:
 *
 * - `capturing`: the object's ingress is this move's hold and its turns seal after the running one;
 *   `capture()`, the waiting calls and the timers become the image.
 * - `transferring`: the image went to the target in chunks; waiting for its relay-ready.
 * - `relaying`: the target restored it; the hold went to it in order, then the go (cutover), and every
 *   later arrival follows. From the go on there is no rollback here: only the target's commit, or its
 *   refusal, ends the move (or, the target lost, what the store says).
 * - `ended`.
 *
 * An abort before the go unseals the object and runs the hold after its own queue, in order, without
 * reading the store: nothing was taken away, so nothing is lost and nothing runs twice.
 */
export class OutgoingMove {
  private phase: 'capturing' | 'transferring' | 'relaying' | 'ended' = 'capturing';
  private readonly held: Held[] = [];
  private source: ObjectRouteFences | undefined;
  private capturing: Promise<unknown> = Promise.resolve();
  private deadline: ReturnType<typeof setTimeout> | undefined;
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
    this.deadline = setTimeout(
      () => this.abort(refusalOf('Timeout', `the target did not restore the object within ${timeoutMs} ms`)),
      timeoutMs,
    );
  }

  /** Seals, captures and sends the image. */
  async start(): Promise<void> {
    const { a, ctx } = this;
    // From here every call admitted on the object's route is held, in order, behind its queue.
    a.ingress = (call, answer) => this.arrived(call, answer);
    const captured = captureActivation(a, ctx.self);
    this.capturing = captured.catch(() => undefined);
    let image;
    try {
      image = await captured;
    } catch (error) {
      const code = error instanceof ZLinkError ? error.code : 'RemoteError';
      return this.abort(refusalOf(code, errorMessage(error)));
    }
    if (this.phase !== 'capturing') return;
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
    clearTimeout(this.deadline);
    this.phase = 'relaying';
    for (const h of this.held.splice(0)) this.relay(h.call, h.answer);
    if (!this.ctx.link.answer(this.target.rid, encodeRelocationCutover(this.relocationId))) this.targetLost();
  }

  /** The target's end of the move: it holds the object now, or it gave the move up. */
  committed(r: RelocationCommitRecord): void {
    if (this.phase !== 'relaying') return;
    if (r.refusal !== undefined) return this.resume(r.refusal);
    this.finish(r.target);
  }

  /** The target left the mesh. Before the go the move aborts; after it, the store tells whether it committed. */
  targetLost(): void {
    if (this.phase === 'capturing' || this.phase === 'transferring')
      return this.abort(
        refusalOf('Unavailable', `the target '${this.target.rid}' was lost before it restored`),
      );
    if (this.phase === 'relaying') void this.settleByStore();
  }

  /** This node is closing: a move not yet at its go is given up (the object stays and closes here). */
  cancel(reason: string): void {
    if (this.phase === 'capturing' || this.phase === 'transferring')
      this.abort(refusalOf('Shutdown', reason));
  }

  private arrived(call: InboundObjectCall, answer: ObjectAnswer): void {
    if (this.phase === 'relaying' || this.phase === 'ended') this.relay(call, answer);
    else this.held.push({ call, answer });
  }

  /** One call on to the target's temporary queue (its answer travels from there, on its reply route). */
  private relay(call: InboundObjectCall, answer: ObjectAnswer): void {
    if (this.ctx.link.answer(this.target.rid, encodeRelocationRelay(this.relocationId, callRecord(call))))
      return;
    answer.error({
      code: 'ObjectClosed',
      message: `${call.objectKind} '${call.id}' is moving and its new owner is not reachable`,
      details: { reason: 'followTargetUnreachable' },
    });
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

  /** The object goes on here: unsealed once its capture (user code) has ended, then its hold, in order. */
  private resume(refusal: RelocationRefusal): void {
    this.phase = 'ended';
    clearTimeout(this.deadline);
    const { a } = this;
    void this.capturing.then(() => {
      a.ingress = undefined;
      a.turns.unseal();
      for (const h of this.held.splice(0)) this.ctx.host.moves.run(a, h.call, h.answer);
      this.settle({ outcome: 'aborted', code: refusal.code, reason: refusal.message });
    });
  }

  /**
   * Committed: the follow route goes in before the activation leaves, so a call on the old route is
   * relayed either way (held arrivals still go as relays until the table lets it go).
   */
  private finish(target: ObjectRouteFences): void {
    this.phase = 'ended';
    const { a, ctx } = this;
    const source = this.source ?? heldRoute(a, ctx.self);
    ctx.followRoutes.install(a.key, source, target);
    ctx.movedAway(a.key.kind, a.key.id, source);
    void ctx.host.moves.relinquish(a);
    this.settle({
      outcome: 'committed',
      owner: target.owner.rid,
      ref: objectRef(a.key, a.cls.type, a.authority.objectGeneration, target.owner.rid),
    });
  }

  /**
   * The target was lost after the go: its CAS may or may not have landed. The store says which —
   * read until it answers. Still ours at the version we hold: the move is off, and a CAS of our own
   * fences a late one of the target's; the calls relayed to it are lost with it (their callers'
   * deadlines end them). The target's: committed (its follow route answers `Unavailable` while it is gone).
   */
  private async settleByStore(): Promise<void> {
    const { a, ctx } = this;
    for (let wait = 50; this.phase === 'relaying'; wait = Math.min(wait * 2, 1000)) {
      try {
        const stored = await ctx.store.get(a.key);
        if (this.phase !== 'relaying') return;
        const record = stored?.record;
        if (stored !== undefined && record !== undefined && record.owner.rid === this.target.rid) {
          return this.finish({
            owner: record.owner,
            objectGeneration: record.objectGeneration,
            authorityOwnerGeneration: record.authorityOwnerGeneration,
            ownerLeaseGeneration: record.ownerLeaseGeneration,
          });
        }
        const lost = refusalOf('Unavailable', `the target '${this.target.rid}' was lost during cutover`);
        if (stored === undefined || !a.heldIn(record, ctx.self)) {
          // Neither end holds it any more (destroyed, or taken over meanwhile): it ends here too.
          this.phase = 'ended';
          await ctx.host.moves.drop(a, 'its record changed during a move');
          return this.settle({ outcome: 'aborted', code: lost.code, reason: lost.message });
        }
        const kept = await ctx.store.compareAndSet(a.key, stored.version, stored.record);
        if (this.phase !== 'relaying') return;
        if (!kept.ok) continue;
        a.authority = { ...a.authority, storeVersion: kept.version };
        return this.resume(lost);
      } catch {
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }
}
