/**
 * The allow-list of proxies whose word about a client's address is believed: read once from the
 * options, refused there with the field named, and matched against a peer as `node:net` reports it.
 */
import { describe, expect, it } from '@jest/globals';
import { TrustedProxies } from '../../../../lib/core/options/index.js';
import { isZLinkError } from '../../../../lib/index.js';

const list = (...entries: string[]) => TrustedProxies.parse('sessions.trustedProxies', entries);

function configurationFault(value: unknown): string {
  try {
    TrustedProxies.parse('sessions.trustedProxies', value);
  } catch (e) {
    expect(isZLinkError(e, 'Configuration')).toBe(true);
    return (e as Error).message;
  }
  return 'accepted';
}

describe('TrustedProxies', () => {
  it('matches single addresses and CIDR ranges of both families', () => {
    const t = list('10.0.0.7', '192.168.0.0/16', '2001:db8::7', '2001:db8:1::/48', '172.16.0.0/12');
    expect(
      ['10.0.0.7', '192.168.255.1', '2001:db8::7', '2001:db8:1:ffff::1', '172.31.255.255'].map((a) =>
        t.trusts(a),
      ),
    ).toEqual([true, true, true, true, true]);
    expect(
      ['10.0.0.8', '192.169.0.1', '2001:db8::8', '2001:db8:2::1', '172.32.0.0', '8.8.8.8'].map((a) =>
        t.trusts(a),
      ),
    ).toEqual([false, false, false, false, false, false]);
    expect(t.entries).toEqual([
      '10.0.0.7',
      '192.168.0.0/16',
      '2001:db8::7',
      '2001:db8:1::/48',
      '172.16.0.0/12',
    ]);
  });

  it('matches an IPv4-mapped IPv6 peer as IPv4, and a mapped entry as the IPv4 one', () => {
    const t = list('10.0.0.0/8', '::ffff:192.0.2.7', '::ffff:198.51.100.0/120');
    // A dual-stack socket reports IPv4 peers this way.
    expect(t.trusts('::ffff:10.1.2.3')).toBe(true);
    expect(t.trusts('::ffff:a01:203')).toBe(true);
    expect(t.trusts('192.0.2.7')).toBe(true);
    expect(t.trusts('198.51.100.200')).toBe(true);
    expect(t.trusts('::ffff:198.51.101.1')).toBe(false);
    // IPv4-compatible and NAT64 forms are other addresses.
    expect(t.trusts('::10.1.2.3')).toBe(false);
    expect(t.trusts('64:ff9b::10.1.2.3')).toBe(false);
  });

  it('takes the named ranges', () => {
    const t = list('loopback', 'linklocal', 'uniquelocal');
    for (const a of [
      '127.0.0.1',
      '127.255.0.9',
      '::1',
      '169.254.1.1',
      'fe80::1',
      'fe80::1%eth0',
      '10.9.9.9',
      '172.20.0.1',
      '192.168.1.1',
      'fd00::5',
    ])
      expect({ a, trusted: t.trusts(a) }).toEqual({ a, trusted: true });
    for (const a of ['128.0.0.1', '::2', 'fec0::1', '11.0.0.1', '172.15.255.255', '8.8.8.8', '2001:db8::1'])
      expect({ a, trusted: t.trusts(a) }).toEqual({ a, trusted: false });
  });

  it('trusts no one by default, nor text that is no address', () => {
    const none = TrustedProxies.parse('x', undefined);
    expect(none.trusts('127.0.0.1')).toBe(false);
    expect(list().trusts('127.0.0.1')).toBe(false);
    const all = list('0.0.0.0/0', '::/0');
    expect(all.trusts('8.8.8.8')).toBe(true);
    expect(all.trusts('2001:db8::1')).toBe(true);
    for (const a of [undefined, '', 'localhost', '127.0.0.1:80', '[::1]', '010.0.0.1', '%eth0'])
      expect({ a, trusted: all.trusts(a) }).toEqual({ a, trusted: false });
  });

  it('refuses at startup every entry that is not an address or range, naming it', () => {
    const cases: [unknown, string][] = [
      ['10.0.0.0/8', 'must be an array'],
      [[42], 'sessions.trustedProxies[0]: must be a string'],
      [['10.0.0.1', 'proxy.internal'], 'sessions.trustedProxies[1]: expected an IPv4 or IPv6 address'],
      [['10.0.0.0/33'], 'a prefix must be 0..32'],
      [['::/129'], 'a prefix must be 0..128'],
      [['10.0.0.0/08'], 'a prefix must be 0..32'],
      [['10.0.0.0/'], 'a prefix must be 0..32'],
      [['10.0.0.0/8/8'], 'a prefix must be 0..32'],
      [['10.0.0.0/-1'], 'a prefix must be 0..32'],
      [['10.0.0.1/8'], 'bits set past its prefix'],
      [['2001:db8::1/32'], 'bits set past its prefix'],
      [['fe80::1%eth0'], 'names no zone'],
      [['010.0.0.1'], 'expected an IPv4 or IPv6 address'],
      [['*'], 'expected an IPv4 or IPv6 address'],
      [[''], 'expected an IPv4 or IPv6 address'],
      [[' 10.0.0.1'], 'expected an IPv4 or IPv6 address'],
      // Names of an object's own prototype are no named ranges.
      [['constructor'], 'expected an IPv4 or IPv6 address'],
      [['__proto__'], 'expected an IPv4 or IPv6 address'],
      [['LOOPBACK'], 'expected an IPv4 or IPv6 address'],
    ];
    for (const [value, message] of cases) expect(configurationFault(value)).toContain(message);
  });
});
