import { configurationError } from '../errors.js';
import { checkEndpoint, checkKeys, isRecord } from '../option-checks.js';
import { checkCurveKey } from './security-options.js';

/**
 * A manual endpoint: a MeshNode peer, a ClientServer server or a fanout publisher. The plain string
 * form is the endpoint alone; the object form may add the RID expected there (another one is refused)
 * and, with `security.curve`, the public key the connection is made to (required then) — or, while the
 * other side rolls to a new key pair, its two keys (the current one first): either is accepted.
 */
export type EndpointOptions = string | { endpoint: string; rid?: string; publicKey?: string | string[] };

export interface NormalizedEndpoint {
  readonly endpoint: string;
  /** The NodeRid, Server RID or publisher RID expected there. */
  readonly rid: string | undefined;
  /** With CURVE: the first of `publicKeys`. */
  readonly publicKey: string | undefined;
  /** With CURVE: the keys the other side may hold, tried in order after a refused handshake; else empty. */
  readonly publicKeys: readonly string[];
}

export interface EndpointRules {
  /** What is at the endpoint, in messages: 'peer', 'server', 'publisher'. */
  readonly what: string;
  /** This runtime speaks CURVE: every entry needs its key. */
  readonly curve: boolean;
  /** With CURVE, the RID is needed too (a MeshNode's NodeRid is known by its key). */
  readonly ridWithCurve: boolean;
  /** The RID's own check (NodeRid or name rules). */
  readonly checkRid: (field: string, value: unknown) => string;
  /**
   * An endpoint listed again: `refuse` always, `once` keeps it once when it says the same (one
   * connection per endpoint) and refuses it when its RID or key differs.
   */
  readonly repeats: 'refuse' | 'once';
}

/**
 * `value` (`field`, an array of `EndpointOptions`) normalized: each endpoint once, each key checked.
 * `Configuration` names the entry and its field.
 */
export function normalizeEndpoints(
  field: string,
  value: unknown,
  rules: EndpointRules,
): NormalizedEndpoint[] {
  const { what, curve, ridWithCurve } = rules;
  if (!Array.isArray(value))
    throw configurationError(field, `must be an array of endpoints or { endpoint, rid?, publicKey? }`);
  const seen = new Map<string, NormalizedEndpoint>();
  const out: NormalizedEndpoint[] = [];
  value.forEach((p: unknown, i) => {
    const f = `${field}[${i}]`;
    const entry = endpointEntry(f, p, rules);
    // With CURVE a connection is made to one key: without it the other side could be anyone.
    const missing =
      entry.publicKey === undefined
        ? 'publicKey'
        : ridWithCurve && entry.rid === undefined
          ? 'rid'
          : undefined;
    if (curve && missing !== undefined)
      throw configurationError(
        typeof p === 'string' ? f : `${f}.${missing}`,
        ridWithCurve
          ? `with security.curve a manual ${what} needs { endpoint, rid, publicKey }: its RID is known by its key`
          : `with security.curve a manual ${what} needs { endpoint, publicKey }: the connection is made to that key only`,
      );
    const before = seen.get(entry.endpoint);
    if (before === undefined) {
      seen.set(entry.endpoint, entry);
      out.push(entry);
    } else if (rules.repeats === 'refuse' || before.rid !== entry.rid || before.publicKey !== entry.publicKey)
      throw configurationError(f, `${what} ${entry.endpoint} is listed twice`);
  });
  return out;
}

function endpointEntry(f: string, p: unknown, rules: EndpointRules): NormalizedEndpoint {
  if (typeof p === 'string')
    return Object.freeze({
      endpoint: checkEndpoint(f, p),
      rid: undefined,
      publicKey: undefined,
      publicKeys: [],
    });
  if (!isRecord(p)) throw configurationError(f, 'must be an endpoint or { endpoint, rid?, publicKey? }');
  checkKeys(f, p, ['endpoint', 'rid', 'publicKey']);
  const endpoint = checkEndpoint(`${f}.endpoint`, p.endpoint);
  const rid = p.rid === undefined ? undefined : rules.checkRid(`${f}.rid`, p.rid);
  const publicKeys = entryKeys(`${f}.publicKey`, p.publicKey, rules);
  return Object.freeze({ endpoint, rid, publicKey: publicKeys[0], publicKeys });
}

/** `publicKey` as given: one Z85 key, or a roll's keys (one or two, distinct); `[]` when absent. */
function entryKeys(f: string, value: unknown, rules: EndpointRules): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (!rules.curve) throw configurationError(f, `a ${rules.what} key needs security.curve on this runtime`);
  if (!Array.isArray(value)) return Object.freeze([checkCurveKey(f, value)]);
  if (value.length < 1 || value.length > 2)
    throw configurationError(f, 'must be a key, or the two keys of a roll (the current one first)');
  const keys = value.map((k: unknown, i) => checkCurveKey(`${f}[${i}]`, k));
  if (keys[0] === keys[1]) throw configurationError(`${f}[1]`, 'is the same key as publicKey[0]');
  return Object.freeze(keys);
}
