import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IncomingMessage, type Server, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  FORWARDED_REFUSALS,
  RefusalCounts,
  TrustedProxies,
  type UpgradeClient,
  clientOfUpgrade,
} from '../../../../lib/transport/address/index.js';

/**
 * The one call a WebSocket listener makes per upgrade (docs/sessions.md#behind-a-reverse-proxy), on
 * Node's own upgrade requests over loopback: `X-Forwarded-For` believed only from a trusted proxy, a
 * stranger's header ignored and counted, a trusted proxy's unreadable header refusing the upgrade.
 */

const LOOPBACK_LB = TrustedProxies.parse('trustedProxies', ['loopback', '10.0.0.0/8']);
const ONLY_10 = TrustedProxies.parse('trustedProxies', ['10.0.0.0/8']);

let server: Server;
let port = 0;
/** What the server's upgrade handler answered for the request it holds. */
let answer: (req: IncomingMessage) => UpgradeClient = () => ({ refused: 'gone', detail: '' });

beforeAll(async () => {
  server = createServer();
  server.on('upgrade', (req: IncomingMessage, socket) => {
    socket.end(`HTTP/1.1 400 Bad Request\r\nX-Answer: ${JSON.stringify(answer(req))}\r\n\r\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends an upgrade request with `xff` (as many headers as given) and returns what the handler said. */
async function upgrade(
  trusted: TrustedProxies,
  xff: string | string[] | undefined,
): Promise<{ result: UpgradeClient; counts: Record<string, number>; localPort: number }> {
  const counts = new RefusalCounts(FORWARDED_REFUSALS);
  answer = (req) => clientOfUpgrade(req, trusted, counts);
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        ...(xff !== undefined && { 'X-Forwarded-For': xff }),
      },
    });
    let localPort = 0;
    req.on('socket', (s) => s.on('connect', () => (localPort = s.localPort ?? 0)));
    req.on('response', (res) => {
      res.resume();
      const result = JSON.parse(res.headers['x-answer'] as string) as UpgradeClient;
      resolve({ result, counts: { ...counts.snapshot() }, localPort });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('clientOfUpgrade', () => {
  it('is the peer when no header came, counting nothing', async () => {
    const { result, counts, localPort } = await upgrade(LOOPBACK_LB, undefined);
    expect(result).toEqual({ client: { address: '127.0.0.1', port: localPort, family: 'IPv4' } });
    expect(counts).toEqual({ untrusted: 0, oversize: 0, malformed: 0 });
  });

  it("believes a trusted proxy's header, from the right, past the trusted hops", async () => {
    const { result } = await upgrade(LOOPBACK_LB, '198.51.100.1, 203.0.113.7, 10.0.0.2');
    expect(result).toEqual({ client: { address: '203.0.113.7', port: undefined, family: 'IPv4' } });
    // Two headers are one list (Node joins them), in order.
    const joined = await upgrade(LOOPBACK_LB, ['203.0.113.8', '10.0.0.3']);
    expect(joined.result).toEqual({ client: { address: '203.0.113.8', port: undefined, family: 'IPv4' } });
  });

  it("never believes a stranger's header: the peer is the client, the header counted", async () => {
    const { result, counts, localPort } = await upgrade(ONLY_10, '203.0.113.7');
    expect(result).toEqual({ client: { address: '127.0.0.1', port: localPort, family: 'IPv4' } });
    expect(counts).toEqual({ untrusted: 1, oversize: 0, malformed: 0 });
  });

  it("refuses the upgrade for a trusted proxy's header that is no address or too long, counted", async () => {
    const bad = await upgrade(LOOPBACK_LB, '203.0.113.7, not-an-address');
    expect(bad.result).toMatchObject({ refused: 'malformed' });
    expect(bad.counts).toEqual({ untrusted: 0, oversize: 0, malformed: 1 });
    const long = await upgrade(
      LOOPBACK_LB,
      Array.from({ length: 17 }, (_, i) => `10.0.0.${i + 1}`).join(', '),
    );
    expect(long.result).toMatchObject({ refused: 'oversize' });
    expect(long.counts).toEqual({ untrusted: 0, oversize: 1, malformed: 0 });
  });

  it('refuses, uncounted, a request whose connection already went', () => {
    const counts = new RefusalCounts(FORWARDED_REFUSALS);
    expect(clientOfUpgrade({ socket: {}, headers: {} }, LOOPBACK_LB, counts)).toMatchObject({
      refused: 'gone',
    });
    expect(counts.snapshot()).toEqual({ untrusted: 0, oversize: 0, malformed: 0 });
  });
});
