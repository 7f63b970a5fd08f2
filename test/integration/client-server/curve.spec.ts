/**
 * CURVE on ClientServer channels (issue 18): the listener is a CURVE server, each Client DEALER connects
 * to the server key it was given (a manual `{ endpoint, publicKey }` or the key a Server descriptor
 * carries). A TCP proxy between client and server records the wire: a plain run shows payload and
 * metadata markers, a CURVE run shows neither. A client whose key the server does not know, a plain
 * client, a server that does not hold the key it is known by, and a server that answers under another
 * Server RID than the manual entry names are each refused and counted, and no handler runs for them.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { type ZLinkOptions, ZLinkRuntime, zlinkKeyPair } from '../../../lib/index.js';
import { Cleanup, EventCollector, outcome } from '../../helpers/index.js';
import { RecordingProxy } from '../../helpers/tcp-proxy.js';
import { listen, startRuntime, waitForCandidates } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const PAYLOAD_MARKER = 'cs-payload-marker-5d21e0';
const META_MARKER = 'cs-metadata-marker-9a0c77';

const keys = { server: zlinkKeyPair(), client: zlinkKeyPair(), other: zlinkKeyPair() };
type Keys = { publicKey: string; secretKey: string };
const curve = (k: Keys, extra: { allow?: string[]; clients?: 'known' | 'any' } = {}) => ({
  security: { curve: { ...k, ...extra } },
});

/** A server of 'billing' whose echo handler notes every run in `ran`. */
async function server(k: Keys | undefined, ran: string[], options: Partial<ZLinkOptions> = {}) {
  return startRuntime(
    cleanup,
    {
      clientServer: { billing: { server: { listen, rid: 'billing-1' } } },
      ...(k && curve(k, { allow: [keys.client.publicKey] })),
      ...options,
    },
    [['request', 'echo', (p: unknown) => (ran.push('echo'), p)]],
  );
}

function echo(client: ZLinkRuntime, timeoutMs = 5000): Promise<unknown> {
  return client.routeClient
    .requestToChannel('billing', 'echo', { text: PAYLOAD_MARKER })
    .metadata('note', META_MARKER)
    .async({ timeoutMs });
}

function port(endpoint: string): number {
  return Number(endpoint.slice(endpoint.lastIndexOf(':') + 1));
}

describe('CURVE on ClientServer channels', () => {
  it('the wire between client and server carries no payload or metadata in clear (a plain pair does)', async () => {
    for (const secure of [false, true]) {
      const ran: string[] = [];
      const s = await server(secure ? keys.server : undefined, ran);
      const proxy = cleanup.add(await RecordingProxy.start());
      proxy.target = port(s.endpoint('billing') as string);
      const entry = secure ? { endpoint: proxy.endpoint, publicKey: keys.server.publicKey } : proxy.endpoint;
      const client = await startRuntime(cleanup, {
        clientServer: { billing: { client: { connect: [entry] } } },
        ...(secure && curve(keys.client)),
      });
      await waitForCandidates(client, 'billing', 1, 10000);
      for (let i = 0; i < 20; i++) expect(await echo(client)).toEqual({ text: PAYLOAD_MARKER });
      expect(ran).toHaveLength(20);
      expect(proxy.bytes.length).toBeGreaterThan(2000);
      expect(proxy.saw(PAYLOAD_MARKER)).toBe(!secure);
      expect(proxy.saw(META_MARKER)).toBe(!secure);
      // The Server RID travels in the welcome, inside the encrypted stream too.
      expect(proxy.saw('billing-1')).toBe(!secure);
      await cleanup.closeAll();
    }
  });

  it('refuses an unknown client key, a plain client, a wrong server key and another Server RID — counted, no handler runs', async () => {
    const ran: string[] = [];
    const s = await server(keys.server, ran);
    const onServer = new EventCollector(s.events);
    const endpoint = s.endpoint('billing') as string;
    const pinned = { endpoint, publicKey: keys.server.publicKey };

    // A client whose key the server does not know: ZAP refuses it, and the client is told.
    const stranger = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [pinned] } } },
      ...curve(keys.other),
    });
    const strangerSaw = new EventCollector(stranger.events);
    await onServer.next('security_refused', (e) => e.reason === 'unknownKey', 10000);
    await strangerSaw.next('security_refused', (e) => e.reason === 'unknownKey', 10000);

    // A plain client: each side says which side lacks CURVE.
    const plain = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [endpoint] } } },
    });
    const plainSaw = new EventCollector(plain.events);
    expect(
      await plainSaw.next('security_refused', (e) => e.reason === 'mechanismMismatch', 10000),
    ).toMatchObject({
      route: 'client-server',
      channel: 'billing',
      detail: expect.stringMatching(/this client speaks plain ZMTP; .* speaks CURVE/),
    });
    expect(
      await onServer.next('security_refused', (e) => e.reason === 'mechanismMismatch', 10000),
    ).toMatchObject({ detail: expect.stringMatching(/this server speaks CURVE; .* does not/) });

    // A client that believes the server holds another key: the handshake fails on its side.
    const misled = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [{ endpoint, publicKey: keys.other.publicKey }] } } },
      ...curve(keys.client),
    });
    const misledSaw = new EventCollector(misled.events);
    await misledSaw.next('security_refused', (e) => e.reason === 'handshakeFailed', 10000);

    // A manual entry naming another Server RID: the server proves its key, but is not that server.
    const expecting = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [{ ...pinned, rid: 'billing-2' }] } } },
      ...curve(keys.client),
    });
    const expectingSaw = new EventCollector(expecting.events);
    expect(
      await expectingSaw.next('security_refused', (e) => e.reason === 'ridKeyMismatch', 10000),
    ).toMatchObject({ peerRid: 'billing-1' });

    for (const c of [stranger, plain, misled, expecting]) {
      const r = await outcome(echo(c, 300));
      expect(r.ok).toBe(false);
    }
    expect(ran).toEqual([]);
    expect(s.events.count('security_refused:unknownKey')).toBeGreaterThanOrEqual(1);
    expect(s.events.count('security_refused:mechanismMismatch')).toBeGreaterThanOrEqual(1);

    // The one client that has it all right is served.
    const good = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [{ ...pinned, rid: 'billing-1' }] } } },
      ...curve(keys.client),
    });
    await waitForCandidates(good, 'billing', 1, 10000);
    expect(await echo(good)).toEqual({ text: PAYLOAD_MARKER });
    expect(ran).toEqual(['echo']);
  });

  it("clients: 'any' admits a key nobody listed (encrypted, not authenticated); its own local server is reached under CURVE", async () => {
    const ran: string[] = [];
    const s = await startRuntime(
      cleanup,
      {
        clientServer: { billing: { server: { listen }, client: {} } },
        ...curve(keys.server, { clients: 'any' }),
      },
      [['request', 'echo', (p: unknown) => (ran.push('echo'), p)]],
    );
    await waitForCandidates(s, 'billing', 1, 10000);
    expect(await echo(s)).toEqual({ text: PAYLOAD_MARKER });
    const anyone = await startRuntime(cleanup, {
      clientServer: {
        billing: {
          client: {
            connect: [{ endpoint: s.endpoint('billing') as string, publicKey: keys.server.publicKey }],
          },
        },
      },
      ...curve(zlinkKeyPair()),
    });
    await waitForCandidates(anyone, 'billing', 1, 10000);
    expect(await echo(anyone)).toEqual({ text: PAYLOAD_MARKER });
    expect(ran).toEqual(['echo', 'echo']);
  });

  it('a listener with its own key pair is reached under that key (its local client too), not the runtime key', async () => {
    const own = zlinkKeyPair();
    const ran: string[] = [];
    const s = await startRuntime(
      cleanup,
      {
        clientServer: {
          billing: { server: { listen, rid: 'billing-1', security: { curve: own } }, client: {} },
        },
        ...curve(keys.server, { allow: [keys.client.publicKey] }),
      },
      [['request', 'echo', (p: unknown) => (ran.push('echo'), p)]],
    );
    await waitForCandidates(s, 'billing', 1, 10000);
    expect(await echo(s)).toEqual({ text: PAYLOAD_MARKER });
    const endpoint = s.endpoint('billing') as string;
    const right = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [{ endpoint, publicKey: own.publicKey }] } } },
      ...curve(keys.client),
    });
    await waitForCandidates(right, 'billing', 1, 10000);
    expect(await echo(right)).toEqual({ text: PAYLOAD_MARKER });
    const runtimeKey = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [{ endpoint, publicKey: keys.server.publicKey }] } } },
      ...curve(keys.client),
    });
    await new EventCollector(runtimeKey.events).next(
      'security_refused',
      (e) => e.reason === 'handshakeFailed',
      10000,
    );
    expect(ran).toEqual(['echo', 'echo']);
  });

  it('configuration: a manual server under CURVE needs its key; a key without CURVE is refused; clients is checked', () => {
    const refused = (options: ZLinkOptions, field: string) =>
      expect(() => new ZLinkRuntime(options)).toThrow(
        expect.objectContaining({ code: 'Configuration', message: expect.stringContaining(field) }),
      );
    refused(
      { clientServer: { billing: { client: { connect: ['tcp://127.0.0.1:1'] } } }, ...curve(keys.client) },
      'clientServer.billing.client.connect[0]',
    );
    refused(
      {
        clientServer: {
          billing: {
            client: { connect: [{ endpoint: 'tcp://127.0.0.1:1', publicKey: keys.server.publicKey }] },
          },
        },
      },
      'clientServer.billing.client.connect[0].publicKey',
    );
    refused(
      {
        clientServer: { billing: { server: { listen } } },
        security: { curve: { ...keys.server, clients: 'all' as 'any' } },
      },
      'security.curve.clients',
    );
    // A listener's own pair: only with security.curve, and a true pair.
    const own = zlinkKeyPair();
    refused(
      { clientServer: { billing: { server: { listen, security: { curve: own } } } } },
      'clientServer.billing.server.security',
    );
    refused(
      {
        clientServer: {
          billing: { server: { listen, security: { curve: { ...own, publicKey: keys.other.publicKey } } } },
        },
        ...curve(keys.server),
      },
      'clientServer.billing.server.security.curve.publicKey',
    );
    // A roll's keys: one or two distinct ones.
    const entry = (publicKey: string[]) => ({
      clientServer: { billing: { client: { connect: [{ endpoint: 'tcp://127.0.0.1:1', publicKey }] } } },
      ...curve(keys.client),
    });
    const k = [keys.server.publicKey, keys.other.publicKey, keys.client.publicKey];
    refused(entry(k), 'clientServer.billing.client.connect[0].publicKey');
    refused(entry([]), 'clientServer.billing.client.connect[0].publicKey');
    refused(entry([k[0] as string, k[0] as string]), 'clientServer.billing.client.connect[0].publicKey[1]');
    refused(entry([k[0] as string, 'not-a-key']), 'clientServer.billing.client.connect[0].publicKey[1]');
    expect(() => new ZLinkRuntime(entry([k[0] as string, k[1] as string]))).not.toThrow();
  });
});
