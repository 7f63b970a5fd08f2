import { curveKeyBytes, curvePublicKeyOf } from '../curve-keys.js';
import { configurationError } from '../errors.js';
import { checkKeys, checkNodeRid, isRecord } from '../option-checks.js';

/** The `security` option: CURVE on this runtime's sockets (docs/decisions.md "CURVE"). */
export interface SecurityOptions {
  curve?: CurveOptions;
}

export interface CurveOptions {
  /** This runtime's public key, Z85 (40 characters). Peers know this node by it. */
  publicKey: string;
  /** Its secret key, Z85. Keep it out of source control: see `curveKeysFromEnv` / `curveKeysFromFile`. */
  secretKey: string;
  /**
   * More public keys whose holders may connect to this runtime's sockets, besides the keys of the
   * configured peers and (with a Location Store) of the nodes it lists. `{ rid, publicKey }` also
   * pins a NodeRid to the key: a MeshNode that connects here without being a configured peer or
   * listed in the store. @default []
   */
  allow?: (string | { rid: string; publicKey: string })[];
  /**
   * Which keys a ClientServer listener or fanout publisher of this runtime admits. `known`: the keys
   * this runtime knows (`allow`, its configured peers, servers and publishers, and every descriptor it
   * read from the Location Store). `any`: every key — traffic is still encrypted and servers still prove
   * their keys, but clients are not authenticated (a public service). MeshNodes always admit known keys
   * only. @default 'known'
   */
  clients?: 'known' | 'any';
}

export interface NormalizedCurve {
  readonly publicKey: string;
  readonly secretKey: string;
  /** Keys admitted besides the peers' and the listed ones; with `rid`, that NodeRid's key. */
  readonly allow: readonly { readonly publicKey: string; readonly rid: string | undefined }[];
  readonly clients: 'known' | 'any';
}

/**
 * A listener's own `security` (a ClientServer Server or a fanout publisher): its own key pair, used
 * instead of the runtime's for that one socket. Admission stays the runtime's (`allow`, `clients`).
 */
export interface ListenerSecurityOptions {
  curve: { publicKey: string; secretKey: string };
}

export interface ListenerKeys {
  readonly publicKey: string;
  readonly secretKey: string;
}

/** `<field>` (a listener's `security`): its key pair, checked as the runtime's is; needs `security.curve`. */
export function normalizeListenerSecurity(
  field: string,
  value: unknown,
  curve: boolean,
): ListenerKeys | undefined {
  if (value === undefined) return undefined;
  if (!curve) throw configurationError(field, 'a listener key pair needs security.curve on this runtime');
  if (!isRecord(value))
    throw configurationError(field, 'must be an object { curve: { publicKey, secretKey } }');
  checkKeys(field, value, ['curve']);
  const c = value.curve;
  if (!isRecord(c)) throw configurationError(`${field}.curve`, 'must be an object { publicKey, secretKey }');
  checkKeys(`${field}.curve`, c, ['publicKey', 'secretKey']);
  return keyPair(`${field}.curve`, c);
}

/** A checked key pair at `field` (`.publicKey`, `.secretKey`): the public key must be the secret key's. */
function keyPair(field: string, c: Record<string, unknown>): ListenerKeys {
  const publicKey = checkCurveKey(`${field}.publicKey`, c.publicKey);
  const secretKey = checkCurveKey(`${field}.secretKey`, c.secretKey);
  // A pasted key of another pair would make every handshake fail with nothing saying why.
  if (curvePublicKeyOf(secretKey) !== publicKey)
    throw configurationError(`${field}.publicKey`, `is not the public key of ${field}.secretKey`);
  return { publicKey, secretKey };
}

export interface NormalizedSecurity {
  readonly curve: NormalizedCurve | undefined;
}

/** A Z85 CURVE public key at `field`, or `Configuration` naming it. */
export function checkCurveKey(field: string, value: unknown): string {
  if (curveKeyBytes(value) === undefined)
    throw configurationError(
      field,
      'must be a Z85 CURVE key: 40 characters (make a pair with `npx nestjs-zlink keygen`)',
    );
  return value as string;
}

export function normalizeSecurity(value: unknown): NormalizedSecurity {
  if (value === undefined) return { curve: undefined };
  if (!isRecord(value)) throw configurationError('security', 'must be an object { curve? }');
  checkKeys('security', value, ['curve']);
  if (value.curve === undefined) return { curve: undefined };
  const c = value.curve;
  if (!isRecord(c))
    throw configurationError('security.curve', 'must be an object { publicKey, secretKey, allow? }');
  checkKeys('security.curve', c, ['publicKey', 'secretKey', 'allow', 'clients']);
  const { publicKey, secretKey } = keyPair('security.curve', c);
  const allowValue = c.allow ?? [];
  if (!Array.isArray(allowValue))
    throw configurationError(
      'security.curve.allow',
      'must be an array of Z85 public keys or { rid, publicKey }',
    );
  const allow = allowValue.map((k: unknown, i) => {
    const f = `security.curve.allow[${i}]`;
    if (!isRecord(k)) return { publicKey: checkCurveKey(f, k), rid: undefined };
    checkKeys(f, k, ['rid', 'publicKey']);
    return { publicKey: checkCurveKey(`${f}.publicKey`, k.publicKey), rid: checkNodeRid(`${f}.rid`, k.rid) };
  });
  const clients = c.clients ?? 'known';
  if (clients !== 'known' && clients !== 'any')
    throw configurationError('security.curve.clients', `must be 'known' or 'any', got ${String(clients)}`);
  return { curve: Object.freeze({ publicKey, secretKey, allow: Object.freeze(allow), clients }) };
}
