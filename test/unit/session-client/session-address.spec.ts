import { describe, expect, it } from '@jest/globals';
import {
  type SessionAddress,
  sessionAddress,
  webSocketUrl,
} from '../../../lib/session-client/session-address.js';

/**
 * Where a session client connects, read once when it is made: the listener's endpoint exactly as
 * `runtime.sessions.endpoint()` gives it (its scheme picks the transport: tcp, tls, ws, wss), or a
 * host and a port (TCP). Anything else is a `Configuration` error naming the field the user got wrong,
 * before any connection is tried.
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
    expect(sessionAddress({ endpoint })).toEqual({ scheme: 'tcp', host, port, path: '' });
  });

  it.each([
    ['tls://game.example.com:7443', 'tls', 'game.example.com', 7443, ''],
    ['tls://[::1]:7443', 'tls', '::1', 7443, ''],
    ['ws://127.0.0.1:7000/play', 'ws', '127.0.0.1', 7000, '/play'],
    ['ws://127.0.0.1:7000', 'ws', '127.0.0.1', 7000, '/'],
    ['ws://[::1]:7000/', 'ws', '::1', 7000, '/'],
    ['wss://game.example.com:8443/play/eu?room=1', 'wss', 'game.example.com', 8443, '/play/eu?room=1'],
    // A WebSocket URL may leave the port out, as a browser's does.
    ['ws://game.example.com/play', 'ws', 'game.example.com', 80, '/play'],
    ['wss://game.example.com/play', 'wss', 'game.example.com', 443, '/play'],
    ['wss://game.example.com?x=1', 'wss', 'game.example.com', 443, '/?x=1'],
  ])('reads the endpoint %s as %s to host %s, port %d, path %j', (endpoint, scheme, host, port, path) => {
    expect(sessionAddress({ endpoint })).toEqual({ scheme, host, port, path });
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
    'tls://127.0.0.1',
    'tls://127.0.0.1:7000/play',
    'ws://127.0.0.1:0/play',
    'wss://127.0.0.1:65536/play',
    'wss://a host/play',
    'ws:/127.0.0.1:7000/play',
    'http://127.0.0.1:7000/play',
    'ipc:///tmp/game',
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
    expect(sessionAddress({ host: '10.0.0.5', port: 7000 })).toEqual({
      scheme: 'tcp',
      host: '10.0.0.5',
      port: 7000,
      path: '',
    });
    expect(sessionAddress({ host: '::1', port: 1 })).toMatchObject({ host: '::1', port: 1 });
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

describe('webSocketUrl', () => {
  it.each([
    ['ws://127.0.0.1:7000/play', 'ws://127.0.0.1:7000/play'],
    ['wss://game.example.com/play', 'wss://game.example.com:443/play'],
    ['ws://[::1]:7000', 'ws://[::1]:7000/'],
  ])('connects to %s at %s', (endpoint, url) => {
    expect(webSocketUrl(sessionAddress({ endpoint }))).toBe(url);
  });
});
