/**
 * The one rule by which a ClientServer Client and a fanout subscriber pick the key to connect to and
 * believe the RID a connection confirms (`EndpointTrust`), on its own.
 */
import { describe, expect, it } from '@jest/globals';
import { zlinkKeyPair } from '../../../../lib/index.js';
import type { ChannelCurve } from '../../../../lib/transport/security/curve-keyring.js';
import { EndpointTrust, type ListedRun } from '../../../../lib/transport/security/endpoint-trust.js';

const E = 'tcp://10.0.0.1:7000';
const [k1, k2, k3] = [zlinkKeyPair(), zlinkKeyPair(), zlinkKeyPair()].map((k) => k.publicKey) as [
  string,
  string,
  string,
];

function trust(curve: boolean) {
  const said: { reason: string; detail: string; peerRid?: string }[] = [];
  const plain: string[] = [];
  const c: ChannelCurve | undefined = curve
    ? {
        socket: { publicKey: k3, secretKey: k3, zapDomain: 'd' },
        refused: (reason, detail, where) => void said.push({ reason, detail, peerRid: where?.peerRid }),
        serve: () => Promise.resolve(() => Promise.resolve()),
      }
    : undefined;
  return { t: new EndpointTrust<ListedRun>(c, 'server', (detail) => void plain.push(detail)), said, plain };
}

const run = (rid: string, generation: string, publicKey?: string): ListedRun => ({
  endpoint: E,
  rid,
  generation,
  publicKey,
});

describe('EndpointTrust', () => {
  it('connects to the manual key, else a listed one; after a refusal, to the next key listed there', () => {
    const { t } = trust(true);
    expect(t.connectKey(E)).toBeUndefined();
    t.listed = new Map([[E, [run('s', 'g1', k1), run('s', 'g2', k2)]]]);
    expect(t.connectKey(E)).toBe(k1);
    expect(t.connectKey(E, k1, false)).toBe(k1);
    expect(t.connectKey(E, k1, true)).toBe(k2);
    expect(t.connectKey(E, k2, true)).toBe(k1);
    // A key no longer listed (the run left): the first listed one.
    expect(t.connectKey(E, k3, false)).toBe(k1);
    t.manual.set(E, { endpoint: E, rid: undefined, publicKey: k3, publicKeys: [k3] });
    expect(t.connectKey(E, k1, true)).toBe(k3);
    expect(trust(false).t.connectKey(E)).toBeUndefined();
  });

  it('believes a listed run only on a connection made to the key its descriptor carries; a mismatch is said once', () => {
    const { t, said } = trust(true);
    t.listed = new Map([[E, [run('s', 'g1', k1)]]]);
    expect(t.accepts(E, { rid: 's', generation: 'g1' }, k1)).toBe(true);
    expect(t.accepts(E, { rid: 's', generation: 'g1' }, k2)).toBe(false);
    expect(t.accepts(E, { rid: 's', generation: 'g1' }, k2)).toBe(false);
    expect(said).toEqual([expect.objectContaining({ reason: 'ridKeyMismatch', peerRid: 's' })]);
    // Not listed at all: not accepted, nothing to say; neither manual nor listed: the caller decides.
    expect(t.accepts(E, { rid: 'other', generation: 'g1' }, k1)).toBe(false);
    expect(t.accepts('tcp://10.0.0.2:1', { rid: 's', generation: 'g1' }, k1)).toBeUndefined();
    expect(said).toHaveLength(1);
  });

  it("a manual entry's rid names the one run accepted there, with or without CURVE", () => {
    const secure = trust(true);
    secure.t.manual.set(E, { endpoint: E, rid: 's', publicKey: k1, publicKeys: [k1] });
    expect(secure.t.accepts(E, { rid: 's', generation: 'g' }, k1)).toBe(true);
    expect(secure.t.accepts(E, { rid: 'x', generation: 'g' }, k1)).toBe(false);
    expect(secure.said.map((s) => s.reason)).toEqual(['ridKeyMismatch']);
    const plain = trust(false);
    plain.t.manual.set(E, { endpoint: E, rid: 's', publicKey: undefined, publicKeys: [] });
    expect(plain.t.accepts(E, { rid: 'x', generation: 'g' }, undefined)).toBe(false);
    expect(plain.plain).toEqual([expect.stringContaining("is 'x', not 's'")]);
    plain.t.manual.set(E, { endpoint: E, rid: undefined, publicKey: undefined, publicKeys: [] });
    expect(plain.t.accepts(E, { rid: 'x', generation: 'g' }, undefined)).toBe(true);
  });

  it('under CURVE a run listed without a key is never used, and that is said once per run', () => {
    const { t, said } = trust(true);
    expect(t.speaksOurs(run('s', 'g1'))).toBe(false);
    expect(t.speaksOurs(run('s', 'g1'))).toBe(false);
    expect(t.speaksOurs(run('s', 'g1', k1))).toBe(true);
    expect(said.map((s) => s.reason)).toEqual(['mechanismMismatch']);
    expect(trust(false).t.speaksOurs(run('s', 'g1'))).toBe(true);
  });
});
