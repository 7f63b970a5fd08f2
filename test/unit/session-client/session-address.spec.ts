import { describe, expect, it } from '@jest/globals';
import { type SessionAddress, sessionAddress } from '../../../lib/session-client/session-address.js';

/**
 * Where a session client connects, read once when it is made: the listener's endpoint exactly as
 * `runtime.sessions.endpoint()` gives it, or a host and a port. Anything else is a `Configuration`
 * error naming the field the user got wrong, before any connection is tried.
 */

const refusal = (field: string) => expect.objectContaining({ code: 'Configuration', details: { field } });

describe('sessionAddress', () => {
  it.each([
    ['tcp://127.0.0.1:7000', '127.0.0.1', 7000],
    ['tcp://game.example.com:1', 'game.example.com', 1],
    ['tcp://localhost:65535', 'localhost', 65535],
    // An IPv6 listener's endpoint is bracketed; the host handed to the socket is not.
    ['tcp://[::1]:7000', '::1', 7000],
    ['tcp://[fe80::1:2]:443', 'fe80::1:2', 443],
  ])('reads the endpoint %s as host %s, port %d', (endpoint, host, port) => {
    expect(sessionAddress({ endpoint })).toEqual({ host, port });
  });

  it.each([
    'tcp://127.0.0.1:65536',
    'tcp://127.0.0.1:0',
    'tcp://127.0.0.1:',
    'tcp://127.0.0.1:123456',
    'tcp://::1:7000',
    'tcp://[::1]',
    'tcp://a host:7000',
    'tcp://127.0.0.1:7000/path',
    ' tcp://127.0.0.1:7000',
    'TCP://127.0.0.1:7000',
    'ws://127.0.0.1:7000',
    '',
  ])('refuses the endpoint %j, naming endpoint and quoting it', (endpoint) => {
    expect(() => sessionAddress({ endpoint })).toThrow(refusal('endpoint'));
    expect(() => sessionAddress({ endpoint })).toThrow(JSON.stringify(endpoint));
  });

  it('refuses an endpoint that is not a string (a caller without types), naming endpoint', () => {
    const address = { endpoint: 7000 } as unknown as SessionAddress;
    expect(() => sessionAddress(address)).toThrow(refusal('endpoint'));
  });

  it('takes host and port as given', () => {
    expect(sessionAddress({ host: '10.0.0.5', port: 7000 })).toEqual({ host: '10.0.0.5', port: 7000 });
    expect(sessionAddress({ host: '::1', port: 1 })).toEqual({ host: '::1', port: 1 });
  });

  it.each([
    [{ host: '', port: 7000 }, 'host'],
    [{ port: 7000 }, 'host'],
    [{}, 'host'],
    [{ host: '127.0.0.1' }, 'port'],
    [{ host: '127.0.0.1', port: 0 }, 'port'],
    [{ host: '127.0.0.1', port: 65536 }, 'port'],
    [{ host: '127.0.0.1', port: 70.5 }, 'port'],
    [{ host: '127.0.0.1', port: '7000' }, 'port'],
    [{ host: '127.0.0.1', port: Number.NaN }, 'port'],
  ])('refuses %j, naming %s', (address, field) => {
    expect(() => sessionAddress(address as unknown as SessionAddress)).toThrow(refusal(field));
  });
});
