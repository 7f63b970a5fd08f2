import type { ZLinkEvents } from '../../core/observe/index.js';
import type { LocationDescriptor } from '../../core/ports/index.js';
import type { ListenerKeys, NormalizedCurve } from '../../core/options/index.js';
import type { SocketCurve } from '../io/index.js';
import { type HandshakeRefusal, type HandshakeWatch, refusalDetail } from './handshake-watch.js';
import { registerZap } from './zap-handler.js';

/** The channel sockets CURVE covers besides RouteMesh's (which has its own keys by NodeRid: `MeshCurve`). */
export type ChannelRoute = 'client-server' | 'fanout';

/** Why a channel socket refused a connection or a confirmed identity. */
export type ChannelRefusal = HandshakeRefusal | 'ridKeyMismatch';

/** CURVE on one channel socket: its own keys, and where its refusals are reported. */
export interface ChannelCurve {
  /** The socket's options: this runtime's key pair and, for a socket that accepts, its ZAP domain. */
  readonly socket: SocketCurve;
  /** Reports a refusal this socket saw (`security_refused` with its route and channel). */
  refused(
    reason: ChannelRefusal,
    detail: string,
    where?: { readonly endpoint?: string; readonly peerRid?: string },
  ): void;
  /** Starts answering ZAP for this socket's connections; resolves with the function that stops it. */
  serve(): Promise<() => Promise<void>>;
}

/**
 * The keys a runtime's ClientServer listeners and fanout publishers admit, and each channel socket's
 * CURVE options (docs/decisions.md "CURVE"). Clients publish nothing, so a listener can know a client
 * only by its key: `security.curve.allow`, the keys of the servers and publishers this runtime is
 * configured with, the keys of every descriptor it reads from the Location Store (a process that is a
 * MeshNode, Server or publisher somewhere is known by its key), and its own. With
 * `security.curve.clients: 'any'` every key is admitted (encrypted, not authenticated).
 */
export class CurveKeyring {
  private readonly known: ReadonlySet<string>;
  /** The keys of each discovery's last read, by (kind, scope). */
  private readonly read = new Map<string, ReadonlySet<string>>();

  constructor(
    readonly keys: NormalizedCurve,
    /** The keys given with manual endpoints. */
    configured: Iterable<string>,
    /** Makes this runtime's ZAP domains its own (two runtimes may share a process and a channel). */
    private readonly tag: string,
    private readonly events: ZLinkEvents,
  ) {
    this.known = new Set([keys.publicKey, ...keys.allow.map((a) => a.publicKey), ...configured]);
  }

  /** One read of (`kind`, `scope`): its descriptors' keys are known from now on, the previous read's go. */
  listed(kind: string, scope: string, descriptors: readonly LocationDescriptor[]): void {
    const keys = new Set<string>();
    for (const d of descriptors) if (d.publicKey !== undefined) keys.add(d.publicKey);
    this.read.set(`${kind}\u0000${scope}`, keys);
  }

  /** Whether the holder of `publicKey` may connect to a listener or publisher of this runtime. */
  admits(publicKey: string): boolean {
    if (this.keys.clients === 'any' || this.known.has(publicKey)) return true;
    for (const keys of this.read.values()) if (keys.has(publicKey)) return true;
    return false;
  }

  /**
   * The CURVE side of one socket of `route` / `channel` (`role`: what it is, in ZAP domains and
   * messages), with the runtime's key pair or, for a listener or publisher that has one, `own`.
   */
  channel(
    route: ChannelRoute,
    channel: string,
    role: 'listener' | 'publisher' | 'client' | 'subscriber',
    own: ListenerKeys = this.keys,
  ): ChannelCurve {
    const { events } = this;
    const zapDomain = `zlink ${route} ${role} ${channel} ${this.tag}`;
    const refused = channelRefusals(events, route, channel);
    return {
      socket: { publicKey: own.publicKey, secretKey: own.secretKey, zapDomain },
      refused,
      serve: () =>
        registerZap(zapDomain, (key, address) => {
          if (this.admits(key)) return true;
          refused('unknownKey', `a connection from ${address} holds a key this ${role} does not know`, {
            endpoint: address,
          });
          return false;
        }),
    };
  }
}

/**
 * Where a channel socket's refusals go (`security_refused` with its route and channel) — with CURVE
 * or without: a plain client refused by a CURVE server reports it too, saying what it lacks.
 */
export function channelRefusals(
  events: ZLinkEvents,
  route: ChannelRoute,
  channel: string,
): ChannelCurve['refused'] {
  return (reason, detail, where = {}) =>
    events.emit({ type: 'security_refused', route, channel, reason, detail, ...where });
}

/** Where a connecting socket (a client DEALER, a subscriber SUB) reports a refused handshake. */
export interface ConnectingSide {
  readonly events: ZLinkEvents;
  readonly route: ChannelRoute;
  readonly channel: string;
  readonly endpoint: string;
  /** With CURVE; without it the refusal (a CURVE server met) is reported all the same. */
  readonly curve?: ChannelCurve;
}

/**
 * Reports a handshake `side` (`self`: "this client", "this subscriber") saw refused by the `peer` at
 * its endpoint, in the one wording, whether this side speaks CURVE or not.
 */
export function reportConnectRefused(
  side: ConnectingSide,
  self: string,
  peer: string,
  reason: HandshakeRefusal,
  code: string,
): void {
  const { curve, events, route, channel, endpoint } = side;
  const detail = refusalDetail(reason, curve !== undefined, self, `the ${peer} at ${endpoint}`, code);
  (curve?.refused ?? channelRefusals(events, route, channel))(reason, detail, { endpoint });
}

/**
 * What a refused handshake on an accepting socket (a listener, a publisher) says: a key not known was
 * said by the ZAP check already; a plain client, or a failed handshake, is said here.
 */
export function acceptedRefusals(curve: ChannelCurve, self: string, client: string): HandshakeWatch {
  return {
    handshake: () => undefined,
    disconnect: () => undefined,
    refused: (reason, address, code) => {
      if (reason === 'unknownKey') return;
      curve.refused(reason, refusalDetail(reason, true, self, `${client} connecting here`, code), {
        endpoint: address,
      });
    },
  };
}
