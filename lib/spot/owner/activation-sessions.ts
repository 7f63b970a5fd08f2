import {
  RUNTIME_PACKET_PREFIX,
  type ZLinkBoundSessions,
  type ZLinkSessionRef,
  encodePayload,
} from '../../core/index.js';
import type { BindingImage } from '../wire/index.js';

/**
 * One session bound to an Actor, as the Actor's owner keeps it (and a move carries it): where its Session
 * owner is, which binding.
 */
export type ActorBinding = BindingImage;

/** Sends one Push to a binding's Session owner (a record on the mesh, or the local host); `false` if it could not. */
export type BindingPusher = (
  binding: ActorBinding,
  actorId: string,
  packet: string,
  payload: Uint8Array,
) => boolean;

const bindingKey = (ownerRid: string, sessionId: string): string => `${ownerRid}\u0000${sessionId}`;

/**
 * The Push an Actor's owner sends each bound session's owner when the incarnation is destroyed: for the
 * Session owner itself (it ends the binding: docs/sessions.md#when-a-binding-ends), never a client's.
 */
export const BINDING_ENDED_PUSH = `${RUNTIME_PACKET_PREFIX}binding-ended`;
const NIL_PAYLOAD = encodePayload(null);

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

  /** Bound as `ctx.push`: no closure per call. */
  readonly push = (packet: string, msg: unknown): number => {
    if (this.bound.size === 0 || this.pusher === undefined) return 0;
    const payload = encodePayload(msg);
    let sent = 0;
    for (const b of this.bound.values()) if (this.pusher(b, this.actorId, packet, payload)) sent++;
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
   * The incarnation is destroyed: every binding ends, and each Session owner is told (a Push of
   * `BINDING_ENDED_PUSH`, behind everything the Actor pushed before). None is left.
   */
  endAll(): void {
    if (this.pusher !== undefined)
      for (const b of this.bound.values()) this.pusher(b, this.actorId, BINDING_ENDED_PUSH, NIL_PAYLOAD);
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

/** A Spot's `ctx.sessions`: none, ever. */
export const NO_SESSIONS: ZLinkBoundSessions = Object.freeze({
  size: 0,
  list: () => [],
  push: () => 0,
});
