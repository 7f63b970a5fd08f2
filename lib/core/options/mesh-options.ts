import type { ObjectRole } from '../kinds.js';
import { configurationError } from '../errors.js';
import {
  type ListenOptions,
  type NormalizedListen,
  checkKeys,
  checkName,
  checkNodeRid,
  isRecord,
  normalizeListen,
  validateWeight,
} from '../option-checks.js';
import { type NormalizedObjectOptions, type ObjectOptions, normalizeObjects } from './object-options.js';
import { type EndpointOptions, type NormalizedEndpoint, normalizeEndpoints } from './endpoint-options.js';

/** The `meshes` option: one MeshNode per MeshName (RouteMesh). */

export interface MeshChannelOptions {
  /** `server` receives calls on the channel (and may send); `client` only sends. Fixed after start. */
  role: 'server' | 'client';
  /** Server role only: 0..10000. @default 100 */
  weight?: number;
}

/**
 * A manual peer: its endpoint, and optionally the NodeRid expected there (a different one is refused)
 * and, with `security.curve`, its public key (required then: the connection is made to that key only).
 */
export type MeshPeerOptions = EndpointOptions;

export interface MeshOptions {
  /** The NodeRid (this node's routing id). @default `<hostname>-<pid>-<random per runtime>-<mesh>` */
  rid?: string;
  listen?: ListenOptions;
  peers?: MeshPeerOptions[];
  channels?: Record<string, MeshChannelOptions>;
  objectRole?: ObjectRole;
  /**
   * The Spot and Actor settings; only on a mesh whose `objectRole` is `client` or `server` (at most
   * one per runtime). @default the defaults of each `ObjectOptions` field
   */
  objects?: ObjectOptions;
  /**
   * `manual`: the `peers` list only. `auto`: also every MeshNode of this MeshName that the Location
   * Store lists (needs `locationStore`). @default 'manual'
   */
  discovery?: 'manual' | 'auto';
}

export interface NormalizedMeshChannel {
  readonly channel: string;
  readonly role: 'server' | 'client';
  /** The initial weight of a Server membership (unused for `client`). */
  readonly weight: number;
}

export interface NormalizedMesh {
  readonly mesh: string;
  readonly rid: string | undefined;
  readonly listen: NormalizedListen;
  /** With CURVE, each peer's `publicKey` is the key it must prove. */
  readonly peers: readonly NormalizedEndpoint[];
  readonly channels: ReadonlyMap<string, NormalizedMeshChannel>;
  readonly objectRole: ObjectRole;
  /** Set exactly when `objectRole` is not `none`, fully defaulted. */
  readonly objects: NormalizedObjectOptions | undefined;
  readonly discovery: 'manual' | 'auto';
}

const MESH_KEYS = ['rid', 'listen', 'peers', 'channels', 'objectRole', 'objects', 'discovery'];

function normalizeMesh(mesh: string, value: unknown, hasStore: boolean, curve: boolean): NormalizedMesh {
  const field = `meshes.${mesh}`;
  checkName(field, mesh);
  if (!isRecord(value))
    throw configurationError(field, 'must be an object { rid?, listen?, peers?, channels? }');
  checkKeys(field, value, MESH_KEYS);
  const rid = value.rid === undefined ? undefined : checkNodeRid(`${field}.rid`, value.rid);
  const objectRole = value.objectRole ?? 'none';
  if (objectRole !== 'none' && objectRole !== 'client' && objectRole !== 'server') {
    throw configurationError(
      `${field}.objectRole`,
      `must be 'none', 'client' or 'server', got ${String(objectRole)}`,
    );
  }
  // An object role needs a Location Store; the framework never substitutes one
  // (docs/protocol.md#location-store).
  if (objectRole !== 'none' && !hasStore) {
    throw configurationError(
      `${field}.objectRole`,
      `'${objectRole}' needs a locationStore; the framework never substitutes one`,
    );
  }
  const objects = normalizeObjects(field, value.objects, objectRole);
  const discovery = value.discovery ?? 'manual';
  if (discovery !== 'manual' && discovery !== 'auto')
    throw configurationError(`${field}.discovery`, `must be 'manual' or 'auto', got ${String(discovery)}`);
  if (discovery === 'auto' && !hasStore)
    throw configurationError(`${field}.discovery`, "'auto' needs a locationStore");
  const peers = normalizeEndpoints(`${field}.peers`, value.peers ?? [], {
    what: 'peer',
    curve,
    repeats: 'refuse',
    ridWithCurve: true,
    checkRid: checkNodeRid,
  });
  const self = peers.findIndex((p) => p.rid !== undefined && p.rid === rid);
  if (self >= 0) throw configurationError(`${field}.peers[${self}].rid`, 'a MeshNode is not its own peer');
  const channelsValue = value.channels ?? {};
  if (!isRecord(channelsValue))
    throw configurationError(`${field}.channels`, 'must be an object keyed by ChannelName');
  const channels = new Map<string, NormalizedMeshChannel>();
  for (const [channel, c] of Object.entries(channelsValue)) {
    const f = `${field}.channels.${channel}`;
    checkName(f, channel);
    if (!isRecord(c)) throw configurationError(f, "must be an object { role: 'server' | 'client', weight? }");
    checkKeys(f, c, ['role', 'weight']);
    if (c.role !== 'server' && c.role !== 'client') {
      throw configurationError(`${f}.role`, `must be 'server' or 'client', got ${String(c.role)}`);
    }
    if (c.role === 'client' && c.weight !== undefined) {
      throw configurationError(
        `${f}.weight`,
        'a weight belongs to the server role (a client receives no calls)',
      );
    }
    channels.set(
      channel,
      Object.freeze({ channel, role: c.role, weight: validateWeight(`${f}.weight`, c.weight) }),
    );
  }
  return Object.freeze({
    mesh,
    rid,
    listen: normalizeListen(`${field}.listen`, value.listen),
    peers: Object.freeze(peers),
    channels,
    objectRole,
    objects,
    discovery,
  });
}

export function normalizeMeshes(
  value: unknown,
  hasStore: boolean,
  curve = false,
): Map<string, NormalizedMesh> {
  const out = new Map<string, NormalizedMesh>();
  if (value === undefined) return out;
  if (!isRecord(value)) throw configurationError('meshes', 'must be an object keyed by MeshName');
  const rids = new Map<string, string>();
  let objectMesh: string | undefined;
  for (const [mesh, m] of Object.entries(value)) {
    const normalized = normalizeMesh(mesh, m, hasStore, curve);
    // Objects ride on the one RouteMesh of a runtime with an object role, so an id
    // resolves to one authority mesh and one object queue, never a choice between two.
    if (normalized.objectRole !== 'none') {
      if (objectMesh !== undefined)
        throw configurationError(
          `meshes.${mesh}.objectRole`,
          `meshes.${objectMesh} already has an object role; a runtime carries Spots and Actors on one mesh only`,
        );
      objectMesh = mesh;
    }
    if (normalized.rid !== undefined) {
      const other = rids.get(normalized.rid);
      if (other)
        throw configurationError(
          `meshes.${mesh}.rid`,
          `NodeRid '${normalized.rid}' is already used by meshes.${other}`,
        );
      rids.set(normalized.rid, mesh);
    }
    out.set(mesh, normalized);
  }
  return out;
}

/**
 * Every ChannelName must name exactly one send path (docs/protocol.md#one-send-path-per-channelname). Returns
 * where each was declared.
 */
