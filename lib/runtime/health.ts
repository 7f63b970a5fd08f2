import type { NormalizedOptions } from '../core/options/index.js';
import type { StoreCheck } from './location.js';
import type { ChannelRole, ZLinkSnapshot } from './snapshot.js';
import type { RuntimeState, ZLinkRuntime } from './zlink-runtime.js';

/** The default bound of the Location Store round trip in a health check. */
export const HEALTH_STORE_TIMEOUT_MS = 1000;

export interface ZLinkHealthOptions {
  /** How long the Location Store may take to answer before it counts as down. @default 1000 */
  readonly storeTimeoutMs?: number;
}

/**
 * One listener the options ask for: a ClientServer Server, a MeshNode's ROUTER, a fanout publisher or
 * an end-user session listener.
 */
export interface ZLinkHealthListener {
  readonly kind: 'client-server' | 'route-mesh' | 'fanout' | 'session';
  /** The ChannelName, the MeshName of a MeshNode, or a session listener's name. */
  readonly name: string;
  /**
   * `draining`: a ClientServer listener whose drain runs or ran (a drain closes it when it ends), or a
   * session listener that no longer accepts connections.
   */
  readonly state: 'bound' | 'draining' | 'not bound';
  readonly endpoint?: string;
  /** A session listener entry's welcomed sessions (a name with several entries is listed once per entry). */
  readonly sessions?: number;
}

export interface ZLinkHealthChannel {
  readonly channel: string;
  readonly arrangement: 'client-server' | 'route-mesh';
  /** The MeshName of a RouteMesh channel. */
  readonly mesh?: string;
  readonly role: ChannelRole;
  /** Client roles: selectable servers (ready, weight > 0, not draining). */
  readonly readyCandidates?: number;
  /** Server roles: this process's weight and drain state. */
  readonly weight?: number;
  readonly draining?: boolean;
}

export interface ZLinkHealthReport {
  /** Started, every listener bound, a ready candidate per client channel, the store answers. */
  readonly healthy: boolean;
  /** Why it is not healthy, one sentence each; empty when healthy. */
  readonly reasons: readonly string[];
  readonly runtime: RuntimeState;
  /** Some local Server (ClientServer or mesh membership) is draining (a fenced lease aside). */
  readonly draining: boolean;
  readonly listeners: readonly ZLinkHealthListener[];
  readonly channels: readonly ZLinkHealthChannel[];
  /** Per MeshNode: its NodeRid, the ready peers' NodeRids and its outbound links. */
  readonly peers: readonly {
    readonly mesh: string;
    readonly rid: string;
    readonly peers: readonly string[];
    readonly links: readonly {
      readonly endpoint: string;
      readonly status: string;
      readonly peerRid?: string;
    }[];
  }[];
  /**
   * The object layer, on a runtime with an object mesh: ready when its owner side admits work (an
   * object server: not fenced, ownership re-checked after a lapse) and, for a caller, when some
   * object server is a ready peer (or this node is one).
   */
  readonly objects?: {
    readonly mesh: string;
    readonly role: 'client' | 'server';
    readonly ready: boolean;
    readonly activations: number;
    readonly objectServers: number;
  };
  readonly store:
    | { readonly configured: false }
    | {
        readonly configured: true;
        readonly answers: boolean;
        readonly responseTimeMs?: number;
        readonly error?: string;
        /** The owner lease passed its fencing deadline: new business messages are refused. */
        readonly fenced: boolean;
        /** Discoveries whose last read failed, as `kind/scope`. */
        readonly discoveryOutage: readonly string[];
      };
}

/**
 * Readiness of a runtime, usable without Nest (the Terminus indicator maps it to up/down): the
 * runtime started; every listener its options ask for is bound (a draining ClientServer listener is
 * on its way to closing, so it counts against); every client channel — ClientServer Client and
 * RouteMesh client membership — has at least one ready candidate; no mesh Server membership drains;
 * when a Location Store is configured, it answers one round trip within `storeTimeoutMs` and the
 * owner lease is not fenced; and on an object mesh, the object layer admits work and (for a caller)
 * an object server is reachable. Never rejects.
 */
export async function checkZLinkHealth(
  runtime: ZLinkRuntime,
  options: ZLinkHealthOptions = {},
): Promise<ZLinkHealthReport> {
  const storeCheck = await runtime.checkStore(options.storeTimeoutMs ?? HEALTH_STORE_TIMEOUT_MS);
  return healthReport(runtime.status, runtime.snapshot(), runtime.options, storeCheck);
}

/**
 * The report from what a check found (the rules of `checkZLinkHealth`, with nothing to wait for):
 * the runtime's state, its snapshot and options, and the store's round trip (`undefined`: no store
 * connection yet).
 */
export function healthReport(
  state: RuntimeState,
  snap: ZLinkSnapshot,
  opts: NormalizedOptions,
  storeCheck: StoreCheck | undefined,
): ZLinkHealthReport {
  const started = state === 'started';
  const reasons: string[] = [];
  if (!started) reasons.push(`the runtime is ${state === 'created' ? 'not started' : state}`);
  const fenced = snap.locationStore?.fenced ?? false;

  const listeners: ZLinkHealthListener[] = [];
  const channels: ZLinkHealthChannel[] = [];
  const listener = (l: ZLinkHealthListener, what: string) => {
    listeners.push(l);
    if (started && l.state === 'not bound') reasons.push(`${what} is not bound`);
    if (l.state === 'draining')
      reasons.push(`${what} is draining (a drain closes its listener when it ends)`);
  };

  for (const c of snap.channels) {
    const server = c.server;
    if (opts.clientServer.get(c.channel)?.server) {
      const draining = server?.draining === true && !fenced;
      listener(
        {
          kind: 'client-server',
          name: c.channel,
          state: !started || !server ? 'not bound' : draining ? 'draining' : 'bound',
          ...(server && { endpoint: server.endpoint }),
        },
        `the ClientServer server of '${c.channel}'`,
      );
    }
    const candidates = c.client?.candidates ?? 0;
    if (opts.clientServer.get(c.channel)?.client && started && candidates === 0)
      reasons.push(`client channel '${c.channel}' has no ready candidate`);
    channels.push({
      channel: c.channel,
      arrangement: 'client-server',
      role: c.role,
      ...(c.role !== 'server' && { readyCandidates: candidates }),
      ...(server && { weight: server.weight, draining: server.draining }),
    });
  }

  for (const mesh of opts.meshes.values()) {
    const node = snap.meshes.find((m) => m.mesh === mesh.mesh);
    listener(
      {
        kind: 'route-mesh',
        name: mesh.mesh,
        state: started && node ? 'bound' : 'not bound',
        ...(node && { endpoint: node.endpoint }),
      },
      `the MeshNode of '${mesh.mesh}'`,
    );
    for (const ch of mesh.channels.values()) {
      const c = node?.channels.find((x) => x.channel === ch.channel);
      if (ch.role === 'client') {
        const candidates = c?.candidates ?? 0;
        if (started && candidates === 0)
          reasons.push(`mesh '${mesh.mesh}' client channel '${ch.channel}' has no ready candidate`);
        channels.push({ ...meshChannel(mesh.mesh, ch.channel, 'client'), readyCandidates: candidates });
      } else {
        if (c?.draining && !fenced)
          reasons.push(`mesh '${mesh.mesh}' Server membership '${ch.channel}' is draining`);
        channels.push({
          ...meshChannel(mesh.mesh, ch.channel, 'server'),
          ...(c?.weight !== undefined && { weight: c.weight, draining: c.draining === true }),
        });
      }
    }
  }

  for (const f of snap.fanout) {
    if (!opts.fanout.get(f.channel)?.publisher) continue;
    listener(
      {
        kind: 'fanout',
        name: f.channel,
        state: started && f.publisher ? 'bound' : 'not bound',
        ...(f.publisher && { endpoint: f.publisher.endpoint }),
      },
      `the fanout publisher of '${f.channel}'`,
    );
  }

  for (const { listener: name, listen } of opts.sessions.values()) {
    // The runtime lists a name's entries in their order (RuntimeSessions.snapshot), each once created.
    const entries = snap.sessions?.filter((x) => x.listener === name) ?? [];
    listen.forEach((entry, i) => {
      const l = entries[i];
      listener(
        {
          kind: 'session',
          name,
          state: !started || !l?.endpoint ? 'not bound' : l.accepting ? 'bound' : 'draining',
          ...(l?.endpoint && { endpoint: l.endpoint }),
          ...(l && { sessions: l.sessions }),
        },
        listen.length > 1
          ? `the session listener '${name}' (${entry.field}, ${entry.kind})`
          : `the session listener '${name}'`,
      );
    });
  }

  let store: ZLinkHealthReport['store'] = { configured: false };
  if (opts.locationStore) {
    const answers = storeCheck?.answers ?? false;
    const error = storeCheck ? storeCheck.error : 'not connected: the runtime has not started';
    if (!answers) reasons.push(`the Location Store does not answer (${error ?? 'unknown'})`);
    if (fenced)
      reasons.push('the owner lease is fenced: new business messages are refused until a refresh succeeds');
    store = {
      configured: true,
      answers,
      ...(storeCheck && { responseTimeMs: storeCheck.responseTimeMs }),
      ...(error !== undefined && { error }),
      fenced,
      discoveryOutage: (snap.locationStore?.discovery ?? [])
        .filter((d) => d.outage)
        .map((d) => `${d.kind}/${d.scope}`),
    };
  }

  let objects: ZLinkHealthReport['objects'];
  const o = snap.objects;
  if (o) {
    const node = snap.meshes.find((m) => m.mesh === o.mesh);
    const objectServers = node?.peers.filter((p) => p.objectRole === 'server').length ?? 0;
    const reachable = o.role === 'server' || objectServers > 0;
    if (o.fenced)
      reasons.push(
        `objects on mesh '${o.mesh}' take no new work: the owner lease is fenced or ownership is being re-checked`,
      );
    if (!reachable) reasons.push(`objects on mesh '${o.mesh}': no object server is a ready peer`);
    objects = {
      mesh: o.mesh,
      role: o.role,
      ready: !o.fenced && reachable,
      activations: o.activations.length,
      objectServers,
    };
  } else if (started && [...opts.meshes.values()].some((m) => m.objectRole !== 'none')) {
    reasons.push('the object layer did not start');
  }

  return {
    healthy: reasons.length === 0,
    reasons,
    runtime: state,
    draining: !fenced && channels.some((c) => c.draining === true),
    listeners,
    channels,
    peers: snap.meshes.map((m) => ({
      mesh: m.mesh,
      rid: m.rid,
      peers: m.peers.map((p) => p.rid),
      links: m.links,
    })),
    ...(objects && { objects }),
    store,
  };
}

function meshChannel(mesh: string, channel: string, role: 'client' | 'server') {
  return { channel, arrangement: 'route-mesh' as const, mesh, role };
}
