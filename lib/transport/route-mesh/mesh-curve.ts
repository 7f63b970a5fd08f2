import { ZLinkError } from '../../core/errors.js';
import { curvePairSecret, curveProof, curveProofHolds } from '../../core/curve-keys.js';
import { type MeshStateRecord, RecordKind } from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { MeshNodeDescriptor } from '../../core/ports/index.js';
import type { NormalizedCurve, NormalizedMesh } from '../../core/options/index.js';
import { pickKey, registerZap } from '../security/index.js';

type HandshakeKind = typeof RecordKind.MeshHello | typeof RecordKind.MeshWelcome;

/**
 * CURVE on one MeshNode (docs/decisions.md "CURVE"): which keys it knows, by NodeRid and by endpoint
 * (the configured peers', then those the Location Store lists), which client keys its ROUTER admits
 * (the ZAP check), and the proof each hello and welcome carries.
 *
 * CURVE itself proves the key of the node we connect to (we connect to one key only) and encrypts
 * every byte; ZAP admits only known keys. What it cannot say is which NodeRid the holder of an admitted
 * key claims on a connection it made to us: so a hello and a welcome carry a proof over the sender's
 * NodeRid and run made with the X25519 secret of the pair (the sender's secret key and the key it
 * believes the receiver holds). The receiver checks it with the key the claimed NodeRid is known by: a
 * member that claims another's NodeRid cannot make it.
 */
export class MeshCurve {
  /** The ZAP domain of this node's ROUTER: the ZAP handler asks this node about its connections. */
  readonly domain: string;
  /** A configured peer's keys (two while it rolls to a new pair), and an allowed `{ rid, publicKey }`'s. */
  private readonly configuredByRid = new Map<string, readonly string[]>();
  private readonly configuredByEndpoint = new Map<string, readonly string[]>();
  private listedByRid = new Map<string, string>();
  private listedByEndpoint = new Map<string, string>();
  /** The key each outbound link connected to (its hello is proven to that key). */
  private readonly connectedTo = new Map<string, string>();
  /** Endpoints whose last outbound handshake was refused: the next connection tries the next key. */
  private readonly refusedAt = new Set<string>();
  /** Of a NodeRid known by two keys, the one its last hello proved (its welcome is proven to that one). */
  private readonly provenBy = new Map<string, string>();
  private readonly secrets = new Map<string, Buffer>();
  private readonly allowList: ReadonlySet<string>;

  constructor(
    readonly keys: NormalizedCurve,
    private readonly mesh: NormalizedMesh,
    private readonly self: { readonly rid: string; readonly generation: string },
    private readonly events: ZLinkEvents,
    /** A key or NodeRid not known here came by: the store may list it by now. */
    private readonly unlisted: () => void = () => undefined,
  ) {
    this.domain = `zlink ${mesh.mesh} ${self.rid} ${self.generation}`;
    for (const p of mesh.peers) {
      if (p.publicKeys.length === 0) continue;
      this.configuredByEndpoint.set(p.endpoint, p.publicKeys);
      if (p.rid !== undefined) this.configuredByRid.set(p.rid, p.publicKeys);
    }
    this.allowList = new Set(keys.allow.map((a) => a.publicKey));
    // An allowed key with a NodeRid pins that NodeRid, as a configured peer's does (no endpoint to connect
    // to).
    for (const a of keys.allow)
      if (a.rid !== undefined && !this.configuredByRid.has(a.rid))
        this.configuredByRid.set(a.rid, [a.publicKey]);
  }

  /** The descriptors the store lists now: their keys are known from here on (the previous list's go). */
  listed(descriptors: readonly MeshNodeDescriptor[]): void {
    const byRid = new Map<string, string>();
    const byEndpoint = new Map<string, string>();
    for (const d of descriptors) {
      if (d.publicKey === undefined || d.rid === this.self.rid) continue;
      byRid.set(d.rid, d.publicKey);
      byEndpoint.set(d.endpoint, d.publicKey);
    }
    this.listedByRid = byRid;
    this.listedByEndpoint = byEndpoint;
  }

  /**
   * The key to connect to `endpoint` with (the server key it must prove), noted for the link's hello:
   * a configured peer's (after a refused handshake, its next key: see `pickKey`), else the listed one,
   * else the one it connected to before. Throws `Unavailable` when none is known: plain ZMTP to a
   * CURVE mesh would only fail its handshake.
   */
  connectKey(endpoint: string): string {
    const configured = this.configuredByEndpoint.get(endpoint);
    const previous = this.connectedTo.get(endpoint);
    const refused = this.refusedAt.delete(endpoint);
    const key =
      (configured && pickKey(configured, previous, refused)) ??
      this.listedByEndpoint.get(endpoint) ??
      previous;
    if (key === undefined)
      throw new ZLinkError('Unavailable', `no public key is known for the node at ${endpoint}`);
    this.connectedTo.set(endpoint, key);
    return key;
  }

  /** An outbound handshake to `endpoint` was refused: its next connection tries the peer's next key. */
  refusedBy(endpoint: string): void {
    this.refusedAt.add(endpoint);
  }

  /**
   * The keys NodeRid `rid` is known by: a configured peer's (two during a roll), else the one the store
   * lists.
   */
  keysOf(rid: string): readonly string[] {
    const configured = this.configuredByRid.get(rid);
    if (configured !== undefined) return configured;
    const listed = this.listedByRid.get(rid);
    return listed === undefined ? [] : [listed];
  }

  /** Starts answering ZAP for this node's ROUTER (`admits`); resolves with the function that stops it. */
  checkConnections(): Promise<() => Promise<void>> {
    return registerZap(this.domain, (key, address) => this.admits(key, address));
  }

  /** ZAP: whether the holder of `publicKey` may connect to this node; a refusal is reported. */
  admits(publicKey: string, address: string): boolean {
    const known =
      this.allowList.has(publicKey) ||
      includes(this.configuredByRid, publicKey) ||
      includes(this.listedByRid, publicKey);
    if (!known) {
      this.unlisted();
      this.refused('unknownKey', `a connection from ${address} holds a key this node does not know`, {
        endpoint: address,
      });
    }
    return known;
  }

  /** The proof a hello on `endpoint`'s link carries (to the key it connected to). */
  helloProof(endpoint: string): Uint8Array | undefined {
    const key = this.connectedTo.get(endpoint);
    return key === undefined ? undefined : this.proof(RecordKind.MeshHello, key);
  }

  /**
   * The proof a welcome to NodeRid `rid` carries; none when no key is known for it (it refuses the welcome
   * then).
   */
  welcomeProof(rid: string): Uint8Array | undefined {
    const key = this.provenBy.get(rid) ?? this.keysOf(rid)[0];
    return key === undefined ? undefined : this.proof(RecordKind.MeshWelcome, key);
  }

  /**
   * Why a hello or welcome is not taken, or `undefined` when its sender proved the key its NodeRid is
   * known by. `lasting` (reported as `ridKeyMismatch`): no proof, or one another key made. Not lasting:
   * no key is known for that NodeRid yet (a node the store has not listed here yet; it is asked again).
   */
  refusal(state: MeshStateRecord): { readonly why: string; readonly lasting: boolean } | undefined {
    const keys = this.keysOf(state.rid);
    if (keys.length === 0) {
      this.unlisted();
      return { why: `no public key is known for NodeRid '${state.rid}' yet`, lasting: false };
    }
    const { proof } = state;
    const words = this.words(state.kind, state.rid, state.generation);
    const proven = proof && keys.find((key) => curveProofHolds(this.secret(key), words, proof));
    if (proven) {
      // Only a configured peer has two keys: the map stays as small as the peer list.
      if (keys.length > 1) this.provenBy.set(state.rid, proven);
      return undefined;
    }
    const why =
      proof === undefined
        ? `NodeRid '${state.rid}' sent no proof of its key`
        : `the node claiming NodeRid '${state.rid}' does not hold the key that NodeRid is known by`;
    this.refused('ridKeyMismatch', why, { peerRid: state.rid });
    return { why, lasting: true };
  }

  /** Reports a refused connection (`security_refused`). */
  refused(
    reason: 'unknownKey' | 'mechanismMismatch' | 'ridKeyMismatch' | 'handshakeFailed',
    detail: string,
    where: { readonly peerRid?: string; readonly endpoint?: string } = {},
  ): void {
    this.events.emit({
      type: 'security_refused',
      route: 'route-mesh',
      mesh: this.mesh.mesh,
      reason,
      detail,
      ...where,
    });
  }

  private proof(kind: HandshakeKind, peerKey: string): Uint8Array {
    return curveProof(this.secret(peerKey), this.words(kind, this.self.rid, this.self.generation));
  }

  private words(kind: MeshStateRecord['kind'], rid: string, generation: string): string[] {
    return [String(kind), this.mesh.mesh, rid, generation];
  }

  private secret(peerKey: string): Buffer {
    let s = this.secrets.get(peerKey);
    if (s === undefined) this.secrets.set(peerKey, (s = curvePairSecret(this.keys.secretKey, peerKey)));
    return s;
  }
}

/** Whether some NodeRid in `map` is known by `key` (one key, or a roll's two). */
function includes(map: ReadonlyMap<string, string | readonly string[]>, key: string): boolean {
  for (const v of map.values()) if (v === key || (typeof v !== 'string' && v.includes(key))) return true;
  return false;
}
