/**
 * The client of a WebSocket upgrade behind proxies: `X-Forwarded-For` read from the right, believed
 * only from a trusted peer, bounded, and what a spoofing or broken sender gets.
 */
import { describe, expect, it } from '@jest/globals';
import {
  type RemoteAddress,
  TrustedProxies,
  forwardedClient,
  normalizeForwardedForOptions,
} from '../../../../lib/transport/address/index.js';
import { isZLinkError } from '../../../../lib/index.js';

const LB: RemoteAddress = { address: '10.0.0.2', port: 40000, family: 'IPv4' };
const STRANGER: RemoteAddress = { address: '203.0.113.9', port: 5555, family: 'IPv4' };
const trusted = TrustedProxies.parse('trustedProxies', ['10.0.0.0/24', '2001:db8:ffff::/48']);
const limits = normalizeForwardedForOptions('forwardedFor', undefined);

const client = (peer: RemoteAddress, header: string | string[] | undefined) =>
  forwardedClient(peer, header, trusted, limits);

describe('X-Forwarded-For', () => {
  it('names the client a trusted proxy saw', () => {
    expect(client(LB, '198.51.100.7')).toEqual({
      outcome: 'forwarded',
      client: { address: '198.51.100.7', port: undefined, family: 'IPv4' },
    });
    expect(client(LB, '2001:DB8:1::7')).toEqual({
      outcome: 'forwarded',
      client: { address: '2001:db8:1::7', port: undefined, family: 'IPv6' },
    });
  });

  it('walks from the right past trusted proxies, so what the client wrote on the left is not believed', () => {
    // The client sent `X-Forwarded-For: 1.1.1.1`, the edge proxy appended what it saw, the inner one its peer.
    expect(client(LB, '1.1.1.1, 198.51.100.7, 10.0.0.5')).toMatchObject({
      outcome: 'forwarded',
      client: { address: '198.51.100.7' },
    });
    // Whatever the client padded it with stays left of the hop that names it.
    expect(client(LB, '10.0.0.9, garbage, 198.51.100.7')).toMatchObject({
      client: { address: '198.51.100.7' },
    });
    // Every hop trusted: the leftmost is the furthest known.
    expect(client(LB, '10.0.0.4, 10.0.0.5')).toMatchObject({
      outcome: 'forwarded',
      client: { address: '10.0.0.4' },
    });
  });

  it('joins repeated headers in order', () => {
    expect(client(LB, ['1.1.1.1', '198.51.100.7, 10.0.0.5'])).toMatchObject({
      client: { address: '198.51.100.7' },
    });
    expect(client(LB, ['198.51.100.7', '10.0.0.5'])).toMatchObject({ client: { address: '198.51.100.7' } });
  });

  it('reads IPv6 peers and hops in every form, and ports where a proxy adds them', () => {
    const v6Peer: RemoteAddress = { address: '2001:db8:ffff::1', port: 1, family: 'IPv6' };
    expect(client(v6Peer, '[2001:db8::7]:4444')).toEqual({
      outcome: 'forwarded',
      client: { address: '2001:db8::7', port: 4444, family: 'IPv6' },
    });
    expect(client(v6Peer, '[2001:db8::7]')).toMatchObject({
      client: { address: '2001:db8::7', port: undefined },
    });
    // Unbracketed, a trailing `:80` is one more group of the address: only brackets carry a port.
    expect(client(v6Peer, '2001:db8::7:80')).toMatchObject({
      client: { address: '2001:db8::7:80', port: undefined },
    });
    expect(client(v6Peer, '198.51.100.7:80')).toMatchObject({
      client: { address: '198.51.100.7', port: 80 },
    });
    expect(client(v6Peer, '::ffff:198.51.100.7')).toMatchObject({
      client: { address: '::ffff:198.51.100.7', family: 'IPv6' },
    });
    // The LB reached us on a dual-stack socket: its IPv4 address in mapped form is still trusted.
    const mappedLb: RemoteAddress = { address: '::ffff:10.0.0.2', port: 1, family: 'IPv6' };
    expect(client(mappedLb, '198.51.100.7')).toMatchObject({ outcome: 'forwarded' });
    // A hop in mapped form that is a trusted proxy is walked past.
    expect(client(LB, '198.51.100.7, ::ffff:10.0.0.3')).toMatchObject({
      client: { address: '198.51.100.7' },
    });
  });

  it('does not believe a header from an untrusted peer, and says so to be counted', () => {
    expect(client(STRANGER, '10.0.0.1')).toEqual({ outcome: 'untrusted', client: STRANGER });
    // Not even read: garbage or a huge header from a stranger is the same outcome.
    expect(client(STRANGER, 'x'.repeat(100_000))).toEqual({ outcome: 'untrusted', client: STRANGER });
    expect(client({ address: '/run/ws.sock', port: undefined, family: 'unix' }, '1.2.3.4')).toMatchObject({
      outcome: 'untrusted',
    });
    // Spoofing an address that is a trusted proxy gains nothing either.
    expect(client({ address: '10.0.1.2', port: 1, family: 'IPv4' }, '10.0.0.2')).toMatchObject({
      outcome: 'untrusted',
    });
  });

  it('takes the peer when there is no header', () => {
    for (const header of [undefined, '', '  ', []])
      expect(client(STRANGER, header as string | string[] | undefined)).toEqual({
        outcome: 'direct',
        client: STRANGER,
      });
    expect(client(LB, undefined)).toEqual({ outcome: 'direct', client: LB });
  });

  it('refuses a trusted peer a header over its bounds', () => {
    const seventeen = Array.from({ length: 17 }, (_, i) => `10.0.0.${i}`).join(',');
    expect(client(LB, seventeen)).toMatchObject({ outcome: 'refused', reason: 'oversize' });
    expect(client(LB, seventeen.split(',').slice(1).join(','))).toMatchObject({ outcome: 'forwarded' });
    const long = `${'1'.repeat(1020)}, 1.1.1.1`;
    expect(client(LB, long)).toMatchObject({ outcome: 'refused', reason: 'oversize' });
    const tight = normalizeForwardedForOptions('f', { maxEntries: 1, maxBytes: 12 });
    expect(forwardedClient(LB, '198.51.100.7', trusted, tight)).toMatchObject({ outcome: 'forwarded' });
    expect(forwardedClient(LB, '198.51.100.77', trusted, tight)).toMatchObject({ outcome: 'refused' });
    expect(forwardedClient(LB, '1.1.1.1,2.2.2.2', trusted, tight)).toMatchObject({ reason: 'oversize' });
  });

  it('refuses a trusted peer a hop that is no address where the walk reaches it', () => {
    const cases = [
      'unknown',
      'garbage, 10.0.0.5',
      '198.51.100.7,',
      '198.51.100.7,,10.0.0.5',
      '198.51.100.7:99999',
      '198.51.100.7:',
      '198.51.100.07',
      '[2001:db8::7',
      '[2001:db8::7]80',
      '[198.51.100.7]:80',
      'fe80::1%eth0',
      '_hidden',
      '198.51.100.7 10.0.0.5',
      '\u0000',
    ];
    for (const header of cases)
      expect({ header, got: client(LB, header) }).toMatchObject({
        header,
        got: { outcome: 'refused', reason: 'malformed' },
      });
  });

  it('checks its bounds at startup', () => {
    expect(limits).toEqual({ maxEntries: 16, maxBytes: 1024 });
    for (const value of [
      { maxEntries: 0 },
      { maxEntries: 257 },
      { maxBytes: 6 },
      { maxBytes: 1e6 },
      { maxEntries: '3' },
    ]) {
      let caught: unknown;
      try {
        normalizeForwardedForOptions('listeners[1].forwardedFor', value);
      } catch (e) {
        caught = e;
      }
      expect(isZLinkError(caught, 'Configuration')).toBe(true);
      expect((caught as Error).message).toMatch(/^listeners\[1\]\.forwardedFor\.max(Entries|Bytes): /);
    }
    expect(() => normalizeForwardedForOptions('f', { depth: 1 })).toThrow('f.depth');
    expect(() => normalizeForwardedForOptions('f', [])).toThrow('f: must be an object');
  });
});
