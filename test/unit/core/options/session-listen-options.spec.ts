import { describe, expect, it } from '@jest/globals';
import { configError, fieldOf } from '../config-error.js';
import { TrustedProxies, type ZLinkOptions, normalizeOptions } from '../../../../lib/core/index.js';
import { testTls } from '../../../helpers/test-tls.js';

/**
 * `sessions.<name>.listen`: one entry or several, each of a kind (`tcp`, `tls`, `websocket`) with the
 * fields of its kind, checked at startup — each fault a `Configuration` error naming the exact field.
 */

const tls = testTls();
const TLS = { key: tls.key, cert: tls.cert };

const withListen = (listen: unknown, more: Record<string, unknown> = {}): ZLinkOptions => ({
  locationStore: { redis: 'redis://127.0.0.1:6379' },
  meshes: { world: { objectRole: 'client' } },
  sessions: { game: { mesh: 'world', listen, ...more } } as ZLinkOptions['sessions'],
});

const entries = (listen: unknown) => normalizeOptions(withListen(listen)).sessions.get('game')?.listen;

function refused(listen: unknown, field: string, message?: string | RegExp): void {
  const e = configError(withListen(listen));
  expect(fieldOf(e)).toBe(field);
  if (message) expect(e.message).toMatch(message);
}

describe('sessions.<name>.listen: entries and defaults', () => {
  it('left out: one tcp entry on a free port of every interface', () => {
    const [entry, ...rest] = normalizeOptions(withListen(undefined)).sessions.get('game')?.listen ?? [];
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({
      field: 'sessions.game.listen',
      kind: 'tcp',
      listen: { port: 0, bindHost: '0.0.0.0', advertiseHost: undefined },
      tls: undefined,
      path: '/',
      origins: undefined,
      perMessageDeflate: false,
      proxyProtocol: false,
    });
    expect(entry?.trustedProxies).toBe(TrustedProxies.none);
  });

  it('one object is one entry; an array is its entries, in order, each named by its index', () => {
    expect(entries({ bindHost: '127.0.0.1', port: 7000 })?.map((e) => [e.field, e.kind])).toEqual([
      ['sessions.game.listen', 'tcp'],
    ]);
    const several = entries([
      { port: 7000 },
      { kind: 'tls', port: 7001, tls: TLS },
      { kind: 'websocket', port: 7002, path: '/play', origins: ['https://game.example.com'] },
      { kind: 'websocket', port: 7003, tls: TLS, perMessageDeflate: true, trustedProxies: ['loopback'] },
    ]);
    expect(several?.map((e) => [e.field, e.kind, e.listen.port, e.path])).toEqual([
      ['sessions.game.listen[0]', 'tcp', 7000, '/'],
      ['sessions.game.listen[1]', 'tls', 7001, '/'],
      ['sessions.game.listen[2]', 'websocket', 7002, '/play'],
      ['sessions.game.listen[3]', 'websocket', 7003, '/'],
    ]);
    expect(several?.[2]?.origins).toEqual(['https://game.example.com']);
    expect(several?.[3]?.perMessageDeflate).toBe(true);
    expect(several?.[3]?.trustedProxies.trusts('127.0.0.1')).toBe(true);
  });

  it('a tls entry keeps its PEM and defaults to TLS 1.2 at least', () => {
    const [entry] = entries({ kind: 'tls', tls: { ...TLS, ca: tls.ca } }) ?? [];
    expect(entry?.tls).toEqual({ key: tls.key, cert: tls.cert, ca: [tls.ca], minVersion: 'TLSv1.2' });
    const [v13] = entries({ kind: 'tls', tls: { ...TLS, minVersion: 'TLSv1.3' } }) ?? [];
    expect(v13?.tls?.minVersion).toBe('TLSv1.3');
    const [buffers] =
      entries({ kind: 'tls', tls: { key: Buffer.from(tls.key), cert: Buffer.from(tls.cert) } }) ?? [];
    expect(Buffer.isBuffer(buffers?.tls?.key)).toBe(true);
  });

  it('proxyProtocol with trustedProxies, on tcp and tls, is taken, the proxies parsed', () => {
    const [tcp, tlsEntry] =
      entries([
        { port: 7000, proxyProtocol: true, trustedProxies: ['10.0.0.0/8'] },
        { kind: 'tls', port: 7001, tls: TLS, proxyProtocol: true, trustedProxies: ['10.0.0.7'] },
      ]) ?? [];
    expect(tcp?.proxyProtocol).toBe(true);
    expect(tcp?.trustedProxies.trusts('10.1.2.3')).toBe(true);
    expect(tlsEntry?.trustedProxies.trusts('10.0.0.8')).toBe(false);
  });

  it('port 0 on several entries of one host is no clash (each gets a free port)', () => {
    expect(entries([{}, { kind: 'tls', tls: TLS }])).toHaveLength(2);
  });
});

describe('sessions.<name>.listen: refused, naming the field', () => {
  it('an empty array, an entry that is no object', () => {
    refused([], 'sessions.game.listen', /at least one/);
    refused('tcp://0.0.0.0:7000', 'sessions.game.listen');
    refused([{}, 7001], 'sessions.game.listen[1]');
  });

  it('an unknown key (the old socket option too)', () => {
    refused({ host: '0.0.0.0' }, 'sessions.game.listen.host', /unknown option/);
    refused([{}, { kind: 'tcp', socket: 'net' }], 'sessions.game.listen[1].socket', /unknown option/);
  });

  it('a kind that is none of tcp, tls, websocket', () => {
    refused({ kind: 'udp' }, 'sessions.game.listen.kind', /'tcp', 'tls', 'websocket'/);
    refused([{}, { kind: 'wss' }], 'sessions.game.listen[1].kind');
  });

  it('the listen fields as for any listener', () => {
    refused({ port: 70000 }, 'sessions.game.listen.port');
    refused([{}, { bindHost: '' }], 'sessions.game.listen[1].bindHost');
  });

  it("kind 'tls' without tls", () => {
    refused([{}, { kind: 'tls' }], 'sessions.game.listen[1].tls', /required for kind 'tls'/);
  });

  it('tls that is no object, or with an unknown key', () => {
    refused({ kind: 'tls', tls: 'server.pem' }, 'sessions.game.listen.tls');
    refused({ kind: 'tls', tls: { ...TLS, passphrase: 'x' } }, 'sessions.game.listen.tls.passphrase');
  });

  it('a key or cert missing, empty or not PEM: at startup, naming which', () => {
    refused({ kind: 'tls', tls: { cert: tls.cert } }, 'sessions.game.listen.tls.key');
    refused({ kind: 'tls', tls: { key: tls.key, cert: '' } }, 'sessions.game.listen.tls.cert');
    refused(
      { kind: 'tls', tls: { key: 'not a key', cert: tls.cert } },
      'sessions.game.listen.tls.key',
      /private key/,
    );
    refused([{}, { kind: 'tls', tls: { key: tls.key, cert: tls.key } }], 'sessions.game.listen[1].tls.cert');
    refused(
      { kind: 'websocket', tls: { key: tls.key, cert: '-----BEGIN CERTIFICATE-----\nAAAA\n' } },
      'sessions.game.listen.tls.cert',
    );
  });

  it('a key that is not the certificate’s', () => {
    refused({ kind: 'tls', tls: { key: tls.caKey, cert: tls.cert } }, 'sessions.game.listen.tls', /pair/);
  });

  it('a ca that is not a certificate, alone or in a list', () => {
    refused({ kind: 'tls', tls: { ...TLS, ca: 'nope' } }, 'sessions.game.listen.tls.ca');
    refused({ kind: 'tls', tls: { ...TLS, ca: [tls.ca, 5] } }, 'sessions.game.listen.tls.ca[1]');
  });

  it('a minVersion older than TLS 1.2 or unknown', () => {
    refused({ kind: 'tls', tls: { ...TLS, minVersion: 'TLSv1.1' } }, 'sessions.game.listen.tls.minVersion');
    refused({ kind: 'tls', tls: { ...TLS, minVersion: 'TLSv2' } }, 'sessions.game.listen.tls.minVersion');
  });

  it.each(['path', 'origins', 'perMessageDeflate'])('%s on a tcp or tls entry (websocket only)', (key) => {
    const value = { path: '/play', origins: ['https://a.example'], perMessageDeflate: true }[key];
    refused({ [key]: value }, `sessions.game.listen.${key}`, /'websocket' only/);
    refused(
      [{}, { kind: 'tls', tls: TLS, [key]: value }],
      `sessions.game.listen[1].${key}`,
      /'websocket' only/,
    );
  });

  it('proxyProtocol on a websocket entry (X-Forwarded-For is its way)', () => {
    refused(
      { kind: 'websocket', proxyProtocol: true, trustedProxies: ['loopback'] },
      'sessions.game.listen.proxyProtocol',
      /X-Forwarded-For/,
    );
  });

  it('proxyProtocol without trustedProxies', () => {
    refused(
      [{}, { port: 7001, proxyProtocol: true }],
      'sessions.game.listen[1].proxyProtocol',
      /trustedProxies/,
    );
  });

  it('proxyProtocol or perMessageDeflate that is no boolean', () => {
    refused({ proxyProtocol: 'yes', trustedProxies: [] }, 'sessions.game.listen.proxyProtocol');
    refused({ kind: 'websocket', perMessageDeflate: 1 }, 'sessions.game.listen.perMessageDeflate');
  });

  it('trustedProxies that are not addresses or ranges', () => {
    refused({ trustedProxies: '10.0.0.0/8' }, 'sessions.game.listen.trustedProxies');
    refused([{}, { trustedProxies: ['10.0.0.1/8'] }], 'sessions.game.listen[1].trustedProxies[0]', /network/);
  });

  it.each(['play', '', '/play?x=1', '/a b', 7])('a websocket path %p', (path) => {
    refused({ kind: 'websocket', path }, 'sessions.game.listen.path', /starting with '\/'/);
  });

  it('origins that are not a non-empty array of strings', () => {
    refused({ kind: 'websocket', origins: 'https://a.example' }, 'sessions.game.listen.origins');
    refused({ kind: 'websocket', origins: [] }, 'sessions.game.listen.origins');
    refused({ kind: 'websocket', origins: ['https://a.example', 3] }, 'sessions.game.listen.origins[1]');
  });

  it('two entries on one explicit port and bind host, in one listener or two', () => {
    refused(
      [{ port: 7000 }, { kind: 'websocket', port: 7000 }],
      'sessions.game.listen[1].port',
      /already sessions\.game\.listen\[0\]/,
    );
    const e = configError({
      ...withListen({ port: 7000, bindHost: '127.0.0.1' }),
      sessions: {
        game: { mesh: 'world', listen: { port: 7000, bindHost: '127.0.0.1' } },
        admin: { mesh: 'world', listen: [{ port: 7001 }, { port: 7000, bindHost: '127.0.0.1' }] },
      },
    });
    expect(fieldOf(e)).toBe('sessions.admin.listen[1].port');
  });
});
