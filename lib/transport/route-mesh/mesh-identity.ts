import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { MeshStateRecord } from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { MeshCurve } from './mesh-curve.js';
import type { Peer } from './peer-host.js';

/**
 * What a MeshNode's hellos and welcomes prove, and what it asks of those it receives, with CURVE or
 * in plain ZMTP: the one place the peer table's identity questions are answered (see `PeerHost`).
 *
 * - With CURVE, each carries a proof made with the key pair (`MeshCurve`): a first contact is taken
 *   only from the holder of the key its NodeRid is known by, and so is any later connection of it.
 * - In plain ZMTP nothing proves a first contact: whoever reaches the port is trusted, as the
 *   network is. Each carries this run's random token instead, so that a later connection of the same
 *   run (both nodes connecting to each other, or a link that restarted) shows it is that run, and a
 *   stranger that copies a connected node's hello takes nothing over.
 */
export class MeshIdentity {
  private readonly runToken = randomBytes(32);

  constructor(
    private readonly curve: MeshCurve | undefined,
    private readonly mesh: string,
    private readonly events: ZLinkEvents,
  ) {}

  /** What a hello on the link to `endpoint` carries. */
  helloProof(endpoint: string): Uint8Array | undefined {
    return this.curve ? this.curve.helloProof(endpoint) : this.runToken;
  }

  /** What a welcome to NodeRid `rid` carries. */
  welcomeProof(rid: string): Uint8Array | undefined {
    return this.curve ? this.curve.welcomeProof(rid) : this.runToken;
  }

  /** See `PeerHost.proofRefusal` (nothing is refused for its proof in plain ZMTP). */
  refusal(state: MeshStateRecord): { readonly why: string; readonly lasting: boolean } | undefined {
    return this.curve?.refusal(state);
  }

  /** See `PeerHost.continues`. */
  continues(peer: Peer, state: MeshStateRecord): boolean {
    return this.curve !== undefined || sameToken(peer.proof, state.proof);
  }

  /** See `PeerHost.claimRefused`. */
  claimRefused(rid: string, detail: string): void {
    this.events.emit({
      type: 'security_refused',
      route: 'route-mesh',
      mesh: this.mesh,
      reason: 'ridInUse',
      peerRid: rid,
      detail,
    });
  }
}

/** Whether two run tokens are the same (in constant time); a missing one proves nothing. */
function sameToken(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  return a !== undefined && b !== undefined && a.length === b.length && timingSafeEqual(a, b);
}
