import { hostname } from 'node:os';
import { describe, expect, it } from '@jest/globals';
import {
  ListenAddress,
  advertisedEndpoint,
  bindAddress,
  boundPort,
  loopbackEndpoint,
} from '../../../../lib/transport/io/endpoints.js';

describe('listener addresses', () => {
  it('binds a wildcard as 0.0.0.0, brackets IPv6, and asks zeromq to pick for port 0', () => {
    expect(bindAddress('*', 0)).toBe('tcp://0.0.0.0:*');
    expect(bindAddress('127.0.0.1', 5555)).toBe('tcp://127.0.0.1:5555');
    expect(bindAddress('::', 5555)).toBe('tcp://[::]:5555');
    expect(bindAddress('[::1]', 0)).toBe('tcp://[::1]:*');
  });

  it('reads the bound port from zeromq, and refuses an endpoint with none', () => {
    expect(boundPort('tcp://0.0.0.0:43211')).toBe(43211);
    expect(boundPort('tcp://[::]:7')).toBe(7);
    expect(() => boundPort(null)).toThrow('cannot read the bound port from null');
    expect(() => boundPort('inproc://x')).toThrow('inproc://x');
  });

  it('advertises the advertise host, else a concrete bind host, else this machine', () => {
    expect(advertisedEndpoint('0.0.0.0', 'app.example', 80)).toBe('tcp://app.example:80');
    expect(advertisedEndpoint('10.0.0.5', undefined, 80)).toBe('tcp://10.0.0.5:80');
    expect(advertisedEndpoint('fd00::5', undefined, 80)).toBe('tcp://[fd00::5]:80');
    for (const wildcard of ['0.0.0.0', '*', '::', '[::]'])
      expect(advertisedEndpoint(wildcard, undefined, 80)).toBe(`tcp://${hostname()}:80`);
  });

  it('reaches its own wildcard listener on loopback, of the same family', () => {
    expect(loopbackEndpoint('0.0.0.0', 9)).toBe('tcp://127.0.0.1:9');
    expect(loopbackEndpoint('*', 9)).toBe('tcp://127.0.0.1:9');
    expect(loopbackEndpoint('::', 9)).toBe('tcp://[::1]:9');
    expect(loopbackEndpoint('[::]', 9)).toBe('tcp://[::1]:9');
    expect(loopbackEndpoint('10.0.0.5', 9)).toBe('tcp://10.0.0.5:9');
  });

  it('ListenAddress binds the configured address and names the port zeromq picked', async () => {
    const address = new ListenAddress({ bindHost: '*', advertiseHost: 'app.example', port: 0 });
    expect(address.bound).toBe(false);
    const asked: string[] = [];
    const socket = {
      lastEndpoint: null as string | null,
      bind: async (to: string) => {
        asked.push(to);
        socket.lastEndpoint = 'tcp://0.0.0.0:40123';
      },
    };
    await address.bind(socket);
    expect(asked).toEqual(['tcp://0.0.0.0:*']);
    expect(address.bound).toBe(true);
    expect(address.endpoint).toBe('tcp://app.example:40123');
    expect(address.local).toBe('tcp://127.0.0.1:40123');
  });

  it('ListenAddress stays unbound when the bind is refused', async () => {
    const address = new ListenAddress({ bindHost: '127.0.0.1', advertiseHost: undefined, port: 80 });
    const socket = {
      lastEndpoint: null,
      bind: () => Promise.reject(new Error('Address already in use')),
    };
    await expect(address.bind(socket)).rejects.toThrow('Address already in use');
    expect(address.bound).toBe(false);
  });
});
