import { describe, expect, it } from '@jest/globals';
import { socketAddressOf } from '../../../../lib/transport/address/index.js';

/** A socket's peer as the one address type every session carries (docs/sessions.md#the-clients-address). */
describe('socketAddressOf', () => {
  it('takes the peer as Node reports it, a dual-stack IPv4 peer included', () => {
    expect(socketAddressOf({ remoteAddress: '10.0.0.7', remotePort: 5000, remoteFamily: 'IPv4' })).toEqual({
      address: '10.0.0.7',
      port: 5000,
      family: 'IPv4',
    });
    expect(
      socketAddressOf({ remoteAddress: '::ffff:10.0.0.7', remotePort: 1, remoteFamily: 'IPv6' }),
    ).toEqual({ address: '::ffff:10.0.0.7', port: 1, family: 'IPv6' });
  });

  it('is undefined once the socket is gone (Node reports no peer)', () => {
    expect(socketAddressOf({})).toBeUndefined();
    expect(
      socketAddressOf({ remoteAddress: '10.0.0.7', remotePort: undefined, remoteFamily: 'IPv4' }),
    ).toBeUndefined();
  });
});
