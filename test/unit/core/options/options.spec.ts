import { describe, expect, it } from '@jest/globals';
import { configError } from '../config-error.js';
import {
  DEFAULT_WEIGHT,
  type ZLinkOptions,
  normalizeOptions,
  validateWeight,
} from '../../../../lib/core/index.js';

/** Options validation (docs/configuration.md#how-options-are-checked): bad topology fails at startup with `Configuration` naming the field. */

const server = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ server: { ...extra } });

describe('weights (integers 0..10000, default 100)', () => {
  it.each([
    ['-1', -1],
    ['10001', 10001],
    ['1.5', 1.5],
    ["'100'", '100'],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['null', null],
  ])('weight %s fails with Configuration naming clientServer.billing.server.weight', (_name, weight) => {
    const e = configError({ clientServer: { billing: server({ weight }) } });
    expect(e.message).toContain('clientServer.billing.server.weight');
    expect(e.details).toEqual({ field: 'clientServer.billing.server.weight' });
  });

  it('the array form names the entry: clientServer[1].server.weight', () => {
    const e = configError({
      clientServer: [
        { channel: 'a', client: {} },
        { channel: 'b', server: { weight: -1 } },
      ],
    });
    expect(e.message).toContain('clientServer[1].server.weight');
  });

  it.each([0, 1, 100, 9999, 10000])('weight %d is accepted', (weight) => {
    const o = normalizeOptions({ clientServer: { billing: { server: { weight } } } });
    expect(o.clientServer.get('billing')?.server?.weight).toBe(weight);
  });

  it('the default weight is 100', () => {
    expect(DEFAULT_WEIGHT).toBe(100);
    expect(
      normalizeOptions({ clientServer: { billing: { server: {} } } }).clientServer.get('billing')?.server
        ?.weight,
    ).toBe(100);
    expect(validateWeight('w', undefined)).toBe(100);
  });

  it('a mesh channel weight is checked too', () => {
    const e = configError({ meshes: { game: { channels: { chat: { role: 'server', weight: 20000 } } } } });
    expect(e.message).toContain('meshes.game.channels.chat.weight');
  });
});

describe('role registrations (one Client and one Server per ChannelName)', () => {
  it('Client role registered twice for one ChannelName fails naming both fields', () => {
    const e = configError({
      clientServer: [
        { channel: 'billing', client: {} },
        { channel: 'other', server: {} },
        { channel: 'billing', client: { connect: ['tcp://127.0.0.1:5000'] } },
      ],
    });
    expect(e.message).toContain('clientServer[2].client');
    expect(e.message).toContain('clientServer[0].client');
  });

  it('Server role registered twice for one ChannelName fails naming both fields', () => {
    const e = configError({
      clientServer: [
        { channel: 'billing', server: { weight: 10 } },
        { channel: 'billing', client: {}, server: {} },
      ],
    });
    expect(e.message).toContain('clientServer[1].server');
    expect(e.message).toContain('clientServer[0].server');
  });

  it('Client and Server registered in separate entries for the same ChannelName merge', () => {
    const o = normalizeOptions({
      clientServer: [
        { channel: 'billing', client: { connect: ['tcp://10.0.0.1:7000'] } },
        { channel: 'billing', server: { weight: 250, listen: { port: 7001 } } },
      ],
    });
    expect(o.clientServer.size).toBe(1);
    const billing = o.clientServer.get('billing');
    expect(billing?.channel).toBe('billing');
    expect(billing?.client?.connect.map((e) => e.endpoint)).toEqual(['tcp://10.0.0.1:7000']);
    expect(billing?.server?.weight).toBe(250);
    expect(billing?.server?.listen.port).toBe(7001);
  });

  it('the object form may carry both roles in one entry', () => {
    const billing = normalizeOptions({
      clientServer: { billing: { client: {}, server: {} } },
    }).clientServer.get('billing');
    expect(billing?.client).toEqual({ connect: [], discovery: 'manual' });
    expect(billing?.server?.weight).toBe(100);
  });

  it('an entry with neither role fails', () => {
    expect(configError({ clientServer: { billing: {} } }).message).toContain('clientServer.billing');
    expect(configError({ clientServer: [{ channel: 'billing' }] }).message).toContain('clientServer[0]');
  });

  it.each([
    ['an empty name', [{ channel: '', client: {} }], 'clientServer[0].channel'],
    ['a missing name', [{ client: {} }], 'clientServer[0].channel'],
    ['a NUL in the name', [{ channel: 'a\0b', client: {} }], 'clientServer[0].channel'],
  ])('a ChannelName with %s fails', (_name, clientServer, field) => {
    expect(configError({ clientServer }).message).toContain(field);
  });

  it('one ChannelName on both clientServer and meshes.<m>.channels fails naming both', () => {
    const e = configError({
      clientServer: { billing: { server: {} } },
      meshes: { game: { channels: { billing: { role: 'server' } } } },
    });
    expect(e.message).toContain('meshes.game.channels.billing');
    expect(e.message).toContain('clientServer.billing');
  });

  it('one ChannelName on both clientServer and fanout fails naming both', () => {
    const e = configError({ clientServer: { news: { client: {} } }, fanout: { news: { subscriber: {} } } });
    expect(e.message).toContain('fanout.news');
    expect(e.message).toContain('clientServer.news');
  });
});

describe('option keys and values', () => {
  it.each([
    ['top level', { requestTimeout: 5 }, 'options.requestTimeout'],
    [
      'channel entry',
      { clientServer: { billing: { server: {}, weight: 3 } } },
      'clientServer.billing.weight',
    ],
    ['array entry', { clientServer: [{ channel: 'b', client: {}, name: 'x' }] }, 'clientServer[0].name'],
    [
      'server role',
      { clientServer: { billing: { server: { wieght: 3 } } } },
      'clientServer.billing.server.wieght',
    ],
    [
      'client role',
      { clientServer: { billing: { client: { endpoints: [] } } } },
      'clientServer.billing.client.endpoints',
    ],
    [
      'listen',
      { clientServer: { billing: { server: { listen: { host: 'x' } } } } },
      'clientServer.billing.server.listen.host',
    ],
  ])('an unknown key (%s) fails naming the key', (_where, options, field) => {
    const e = configError(options);
    expect(e.message).toContain(field);
    expect(e.details).toEqual({ field });
  });

  it.each([
    ['http://127.0.0.1:5000'],
    ['tcp://127.0.0.1'],
    ['tcp://:5000'],
    ['127.0.0.1:5000'],
    ['tcp://host name:5000'],
    ['tcp://127.0.0.1:65536'],
    ['tcp://127.0.0.1:99999'],
    ['tcp://127.0.0.1:0'],
    [''],
    [42],
  ])('a bad endpoint %p fails naming clientServer.billing.client.connect[1]', (endpoint) => {
    const e = configError({
      clientServer: { billing: { client: { connect: ['tcp://127.0.0.1:5000', endpoint] } } },
    });
    expect(e.message).toContain('clientServer.billing.client.connect[1]');
  });

  it('connect that is not an array fails', () => {
    expect(
      configError({ clientServer: { billing: { client: { connect: 'tcp://h:1' } } } }).message,
    ).toContain('clientServer.billing.client.connect');
  });

  it.each([
    ['tcp://127.0.0.1:5000'],
    ['tcp://billing.internal:65535'],
    ['tcp://[::1]:7000'],
    ['ipc:///tmp/zlink.sock'],
    ['inproc://billing'],
  ])('a good endpoint %s is accepted', (endpoint) => {
    const o = normalizeOptions({ clientServer: { billing: { client: { connect: [endpoint] } } } });
    expect(o.clientServer.get('billing')?.client?.connect).toEqual([
      { endpoint, rid: undefined, publicKey: undefined, publicKeys: [] },
    ]);
  });

  it.each([[-1], [65536], [1.5], ['80'], ['']])(
    'listen port %p fails naming clientServer.billing.server.listen.port',
    (port) => {
      const e = configError({ clientServer: { billing: { server: { listen: { port } } } } });
      expect(e.message).toContain('clientServer.billing.server.listen.port');
    },
  );

  it('listen port 0 and 65535 are accepted; listen defaults to port 0 on 0.0.0.0', () => {
    for (const port of [0, 65535]) {
      const o = normalizeOptions({ clientServer: { billing: { server: { listen: { port } } } } });
      expect(o.clientServer.get('billing')?.server?.listen.port).toBe(port);
    }
    const o = normalizeOptions({ clientServer: { billing: { server: {} } } });
    expect(o.clientServer.get('billing')?.server?.listen).toEqual({
      port: 0,
      bindHost: '0.0.0.0',
      advertiseHost: undefined,
    });
  });

  it.each([
    ['bindHost', { bindHost: '' }],
    ['advertiseHost', { advertiseHost: 5 }],
  ])('a bad listen %s fails naming it', (key, listen) => {
    expect(configError({ clientServer: { billing: { server: { listen } } } }).message).toContain(
      `clientServer.billing.server.listen.${key}`,
    );
  });

  it.each([
    ['requestTimeoutMs', 0],
    ['requestTimeoutMs', -1],
    ['requestTimeoutMs', 1.5],
    ['handlerConcurrency', 0],
    ['sendQueueLimit', '10'],
    ['drainTimeoutMs', Number.NaN],
  ])('%s = %p fails naming it', (key, value) => {
    expect(configError({ [key]: value }).message).toContain(key);
  });

  it.each([[[]], ['options'], [7]])('options that are not an object (%p) fail', (options) => {
    configError(options);
  });

  it('clientServer of the wrong shape fails', () => {
    expect(configError({ clientServer: 'billing' }).message).toContain('clientServer');
    expect(configError({ clientServer: { billing: 'server' } }).message).toContain('clientServer.billing');
  });

  it('arrangements this version does not build yet are refused, not ignored', () => {
    expect(configError({ fanout: { news: {} } }).message).toContain('fanout');
  });
});

describe('defaults', () => {
  it('requestTimeoutMs 30000, handlerConcurrency 1024, sendQueueLimit 10000, drainTimeoutMs 10000', () => {
    for (const o of [normalizeOptions(undefined), normalizeOptions({})]) {
      expect(o.requestTimeoutMs).toBe(30000);
      expect(o.handlerConcurrency).toBe(1024);
      expect(o.sendQueueLimit).toBe(10000);
      expect(o.drainTimeoutMs).toBe(10000);
      expect(o.clientServer.size).toBe(0);
    }
  });

  it('given values replace the defaults', () => {
    const o = normalizeOptions({
      requestTimeoutMs: 2000,
      handlerConcurrency: 8,
      sendQueueLimit: 50,
      drainTimeoutMs: 100,
    });
    expect([o.requestTimeoutMs, o.handlerConcurrency, o.sendQueueLimit, o.drainTimeoutMs]).toEqual([
      2000, 8, 50, 100,
    ]);
  });

  it('the result is frozen', () => {
    const o = normalizeOptions({
      clientServer: { billing: { client: { connect: ['tcp://h:1'] }, server: {} } },
    });
    expect(Object.isFrozen(o)).toBe(true);
    const billing = o.clientServer.get('billing');
    expect(Object.isFrozen(billing)).toBe(true);
    expect(Object.isFrozen(billing?.client?.connect)).toBe(true);
  });

  it('the caller’s options object is not changed', () => {
    const input: ZLinkOptions = { clientServer: { billing: { server: {} } } };
    const before = JSON.stringify(input);
    normalizeOptions(input);
    expect(JSON.stringify(input)).toBe(before);
  });
});
