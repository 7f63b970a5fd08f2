import { invalidArgument } from '../../core/errors.js';
import { encodePayload } from '../../core/wire/index.js';
import { type ZLinkBoundSessions, type ZLinkSessionRef, packetProblem } from '../../core/objects/index.js';
import type { BindingImage } from '../wire/index.js';

/**
 * One session bound to an Actor, as the Actor's owner keeps it (and a move carries it): where its Session
 * owner is, which binding.
 */
export type ActorBinding = BindingImage;

/** What an Actor's owner sends a binding's Session owner (a record on the mesh, or the local host). */
export interface BindingPusher {
  /** One Push for the session's client; `false` if it could not be sent. */
  push(binding: ActorBinding, actorId: string, packet: string, payload: Uint8Array): boolean;
  /** The incarnation the binding was made to is destroyed (record 48, never a Push); `false` if not sent. */
  ended(binding: ActorBinding, actorId: string): boolean;
}

const bindingKey = (ownerRid: string, sessionId: string): string => `${ownerRid}\u0000${sessionId}`;

/**
 * One Actor activation's bound sessions (`ctx.sessions`): changed only in the Actor's own turns (a
 * bind, a tombstone, a session's end), so a handler never sees it change under it; it travels in the
 * move's image and a new incarnation starts with none.
 */
export class ObjectSessions implements ZLinkBoundSessions {
  private readonly bound = new Map<string, ActorBinding>();

  constructor(
    private readonly actorId: string,
    private readonly pusher: BindingPusher | undefined,
  ) {}

  get size(): number {
    return this.bound.size;
  }

  list(): readonly ZLinkSessionRef[] {
    return [...this.bound.values()].map((b) => ({
      id: b.sessionId,
      listener: b.listener,
      ownerRid: b.ownerRid,
    }));
  }

  /**
   * Bound as `ctx.push`: no closure per call. Throws `InvalidArgument` for a packet that is not a
   * non-empty string or is under the runtime's `zlink:` prefix (whether or not a session is bound, so
   * the mistake shows in the first test).
   */
  readonly push = (packet: string, msg: unknown): number => {
    const problem = packetProblem(packet);
    if (problem !== undefined)
      throw invalidArgument('packet', `${problem} (push of actor '${this.actorId}')`);
    const pusher = this.pusher;
    if (this.bound.size === 0 || pusher === undefined) return 0;
    const payload = encodePayload(msg);
    let sent = 0;
    for (const b of this.bound.values()) if (pusher.push(b, this.actorId, packet, payload)) sent++;
    return sent;
  };

  /** Registers `binding`, replacing an older binding of the same session (a rebind under this owner). */
  bind(binding: ActorBinding): void {
    this.bound.set(bindingKey(binding.ownerRid, binding.sessionId), binding);
  }

  /**
   * Removes the binding of session (`ownerRid`, `sessionId`) — only the one of `bindingGeneration` or
   * older: a late tombstone never removes the binding that replaced it. Returns the removed binding.
   */
  unbind(ownerRid: string, sessionId: string, bindingGeneration: number): ActorBinding | undefined {
    const key = bindingKey(ownerRid, sessionId);
    const b = this.bound.get(key);
    if (b === undefined || b.bindingGeneration > bindingGeneration) return undefined;
    this.bound.delete(key);
    return b;
  }

  /**
   * The binding of session (`ownerRid`, `sessionId`) if it is the one of `bindingGeneration` or older
   * (as `unbind` would remove it), left in place.
   */
  find(ownerRid: string, sessionId: string, bindingGeneration: number): ActorBinding | undefined {
    const b = this.bound.get(bindingKey(ownerRid, sessionId));
    return b === undefined || b.bindingGeneration > bindingGeneration ? undefined : b;
  }

  /** Every binding of Session owner run `rid` (it ended): removed, and returned. */
  dropOwner(rid: string, generation: string): ActorBinding[] {
    const gone: ActorBinding[] = [];
    for (const [key, b] of this.bound)
      if (b.ownerRid === rid && b.ownerGeneration === generation) {
        this.bound.delete(key);
        gone.push(b);
      }
    return gone;
  }

  /**
   * The incarnation is destroyed: every binding ends, and each Session owner is told (record 48, behind
   * everything the Actor pushed before: docs/sessions.md#when-a-binding-ends). None is left.
   */
  endAll(): void {
    if (this.pusher !== undefined) for (const b of this.bound.values()) this.pusher.ended(b, this.actorId);
    this.bound.clear();
  }

  /** As a move's image carries them. */
  image(): ActorBinding[] {
    return [...this.bound.values()];
  }

  /** Takes what a move carried. */
  restore(image: readonly ActorBinding[]): void {
    this.bound.clear();
    for (const b of image) this.bind(b);
  }
}
