/**
 * IP text read strictly and written one way: the ground both the PROXY header and the trusted
 * proxies stand on.
 */
import { describe, expect, it } from '@jest/globals';
import { formatIPv6, parseIPv4, parseIPv6, parseIp } from '../../../../lib/core/options/index.js';

const v6 = (text: string) => {
  const bytes = parseIPv6(text);
  return bytes === undefined ? undefined : formatIPv6(bytes);
};

describe('IP text', () => {
  it('reads dotted IPv4 only in its canonical form', () => {
    expect([...(parseIPv4('192.168.0.1') ?? [])]).toEqual([192, 168, 0, 1]);
    expect(parseIPv4('0.0.0.0')).toBeDefined();
    expect(parseIPv4('255.255.255.255')).toBeDefined();
    for (const bad of [
      '010.0.0.1', // a leading zero could be octal elsewhere
      '256.0.0.1',
      '1.2.3',
      '1.2.3.4.5',
      '1.2.3.',
      ' 1.2.3.4',
      '1.2.3.4 ',
      '1.2.3.-4',
      '1.2.3.4e0',
      '0x7f.0.0.1',
      '',
      '1..3.4',
      '1.2.3.4444',
    ])
      expect(parseIPv4(bad)).toBeUndefined();
  });

  it('reads IPv6 as inet_pton does and writes it as RFC 5952 recommends', () => {
    expect(v6('2001:0DB8:0000:0000:0000:0000:0000:0001')).toBe('2001:db8::1');
    expect(v6('::')).toBe('::');
    expect(v6('::1')).toBe('::1');
    expect(v6('1::')).toBe('1::');
    expect(v6('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toBe('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff');
    // The longest zero run is compressed, the first of equal ones, never a single group.
    expect(v6('1:0:0:2:0:0:0:3')).toBe('1:0:0:2::3');
    expect(v6('1:0:0:2:0:0:3:4')).toBe('1::2:0:0:3:4');
    expect(v6('1:0:2:3:4:5:6:7')).toBe('1:0:2:3:4:5:6:7');
    // `::` standing for one group is read.
    expect(v6('1:2:3:4:5:6::8')).toBe('1:2:3:4:5:6:0:8');
    // IPv4-mapped, in either spelling, is written as Node reports a dual-stack peer.
    expect(v6('::ffff:10.0.0.1')).toBe('::ffff:10.0.0.1');
    expect(v6('0:0:0:0:0:ffff:a00:1')).toBe('::ffff:10.0.0.1');
    expect(v6('64:ff9b::192.0.2.33')).toBe('64:ff9b::c000:221');
  });

  it('refuses what is not IPv6', () => {
    for (const bad of [
      '',
      ':',
      ':::',
      '1:::2',
      '1::2::3',
      ':1:2:3:4:5:6:7',
      '1:2:3:4:5:6:7:',
      '1:2:3:4:5:6:7',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7::8',
      '12345::',
      'g::',
      'fe80::1%eth0',
      '::ffff:010.0.0.1',
      '::1.2.3.4:5',
      '1.2.3.4::',
      '[::1]',
      ' ::1',
    ])
      expect({ bad, got: parseIPv6(bad) }).toEqual({ bad, got: undefined });
  });

  it('holds IPv4 inside ::ffff:0:0/96, so both spellings are one address', () => {
    const a = parseIp('10.0.0.1');
    const b = parseIp('::ffff:10.0.0.1');
    expect(a?.v4).toBe(true);
    expect(b?.v4).toBe(false);
    expect([...(a?.bytes ?? [])]).toEqual([...(b?.bytes ?? [])]);
    expect(parseIp('example.com')).toBeUndefined();
  });
});
