/**
 * Connection fuzz (issue 27): abuse at the connection level, not the frame level, against every
 * listener type — a MeshNode's ROUTER, a ClientServer listener and a fanout publisher — running in a
 * child process, in plain ZMTP and under CURVE. From this process: many connections announcing the
 * same routing id (the mesh's and another's), half-open connections (nothing, half a greeting, a
 * greeting and silence), greetings with the wrong mechanism or version, connections reset half-way
 * through a frame, ZMTP PINGs, and connections that finish the handshake and never say hello.
 *
 * Checked: the child never dies; every connection that does not finish its handshake is closed by the
 * child within its handshake bound; afterwards a proper runtime's call is answered on each listener
 * and an event is received from the publisher; the child's memory after the abuse is bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zmq from 'zeromq';
import { type ZLinkKeyPair, ZLinkRuntime, zlinkKeyPair } from '../../lib/index.js';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';
import { Cleanup, waitFor } from '../helpers/index.js';

/** The child's handshake bound (sockets.ts) and some slack for a loaded machine. */
const HANDSHAKE_CLOSE_MS = 10000 + 8000;

const port = (endpoint: string) => Number(endpoint.slice(endpoint.lastIndexOf(':') + 1));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A ZMTP 3.1 greeting naming `mechanism` (padded to 20 bytes), as a client. */
function greeting(mechanism: string, version: readonly [number, number] = [3, 1]): Buffer {
  const g = Buffer.alloc(64);
  g[0] = 0xff;
  g[9] = 0x7f;
  g[10] = version[0];
  g[11] = version[1];
  g.write(mechanism, 12, 'latin1');
  return g;
}

/** A ZMTP command frame (short form). */
function command(name: string, body: Buffer = Buffer.alloc(0)): Buffer {
  const data = Buffer.concat([Buffer.from([name.length]), Buffer.from(name, 'latin1'), body]);
  return Buffer.concat([Buffer.from([0x04, data.length]), data]);
}

function property(name: string, value: string): Buffer {
  const v = Buffer.from(value, 'latin1');
  const head = Buffer.alloc(1 + name.length + 4);
  head[0] = name.length;
  head.write(name, 1, 'latin1');
  head.writeUInt32BE(v.length, 1 + name.length);
  return Buffer.concat([head, v]);
}

/** NULL's READY for a socket of `type` announcing `identity`. */
function ready(type: string, identity: string): Buffer {
  return command('READY', Buffer.concat([property('Socket-Type', type), property('Identity', identity)]));
}

/** A raw TCP connection that writes `chunks` and records whether (and when) the other side closed it. */
class RawConnection {
  readonly socket: Socket;
  closedAt: number | undefined;
  readonly openedAt = Date.now();

  constructor(target: number, chunks: readonly Buffer[] = [], hold = true) {
    this.socket = connect(target, '127.0.0.1');
    this.socket.on('error', () => undefined);
    this.socket.on('data', () => undefined);
    this.socket.on('close', () => (this.closedAt ??= Date.now()));
    this.socket.on('connect', () => {
      for (const c of chunks) this.socket.write(c);
      if (!hold) this.socket.end();
    });
  }

  reset(): void {
    this.socket.resetAndDestroy();
  }

  end(): void {
    this.socket.destroy();
  }
}

interface Target {
  child: ChildApp;
  ready: ChildMessage;
  dir: string;
}

function startTarget(keys: ZLinkKeyPair | undefined, allow: string | undefined): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'zlink-connfuzz-'));
  const child = new ChildApp('listeners', 'e2e/curve-node.app.js', {
    keys,
    allow,
    executionLog: join(dir, 'ran.log'),
  });
  return child.next('ready').then((ready) => ({ child, ready, dir }));
}

describe.each([
  ['plain ZMTP', false],
  ['CURVE', true],
])('connection abuse on every listener type (%s)', (_mode, secure) => {
  const childKeys = secure ? zlinkKeyPair() : undefined;
  const testKeys = secure ? zlinkKeyPair() : undefined;
  const cleanup = new Cleanup();
  let target: Target;
  const endpoints = (): Record<'mesh' | 'clientServer' | 'fanout', string> => ({
    mesh: target.ready.mesh as string,
    clientServer: target.ready.clientServer as string,
    fanout: target.ready.fanout as string,
  });

  beforeAll(async () => {
    target = await startTarget(childKeys, testKeys?.publicKey);
  }, 30000);

  afterAll(async () => {
    await cleanup.closeAll();
    if (target?.child.running) {
      target.child.send({ type: 'shutdown' });
      await target.child.exited;
    }
    rmSync(target.dir, { recursive: true, force: true });
  }, 30000);

  it('the child stays up, closes every connection that never finishes its handshake, and serves afterwards', async () => {
    const raw: RawConnection[] = [];
    const half: RawConnection[] = [];
    const zsockets: zmq.Socket[] = [];
    cleanup.add({
      close: async () => {
        for (const c of [...raw, ...half]) c.end();
        for (const s of zsockets) if (!s.closed) s.close();
      },
    });
    const wrong = secure ? 'NULL' : 'CURVE';
    for (const [name, endpoint] of Object.entries(endpoints())) {
      const at = port(endpoint);
      // Half-open: nothing at all, half a greeting, a whole greeting and then silence.
      for (let i = 0; i < 10; i++) {
        half.push(new RawConnection(at));
        half.push(new RawConnection(at, [greeting('NULL').subarray(0, 11)]));
        half.push(new RawConnection(at, [greeting(secure ? 'CURVE' : 'NULL')]));
      }
      // Wrong mechanism, an unknown one, another version, garbage: each ends at once or at the bound.
      for (let i = 0; i < 20; i++) {
        raw.push(new RawConnection(at, [greeting(wrong), ready('DEALER', 'x')]));
        raw.push(new RawConnection(at, [greeting('XYZZY')]));
        raw.push(new RawConnection(at, [greeting('NULL', [2, 0])]));
        raw.push(new RawConnection(at, [Buffer.from(`GET / HTTP/1.1\r\nHost: ${name}\r\n\r\n`)], false));
      }
      if (!secure) {
        // Plain: a handshake, then PINGs, a frame cut off by a reset, a frame of a silly length.
        for (let i = 0; i < 20; i++) {
          const ping = command('PING', Buffer.from([0, 10, 1, 2, 3]));
          const frames = Buffer.concat([greeting('NULL'), ready('DEALER', 'node-b'), ping, ping]);
          const cut = new RawConnection(at, [frames, Buffer.from([0x00, 200, 1, 2, 3])]);
          raw.push(cut);
          setTimeout(() => cut.reset(), 50 + i * 10);
          raw.push(
            new RawConnection(at, [
              frames,
              Buffer.from([0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            ]),
          );
        }
      }
      // Duplicate routing ids over finished handshakes, and sockets that never say hello.
      for (let i = 0; i < 30; i++) {
        // Under CURVE, two of three hold a stranger's key (refused by ZAP); the rest speak plain ZMTP.
        const stranger = zlinkKeyPair();
        const curve =
          secure && i % 3 !== 0
            ? {
                curveServerKey: childKeys?.publicKey as string,
                curvePublicKey: stranger.publicKey,
                curveSecretKey: stranger.secretKey,
              }
            : {};
        const routingId = i % 2 ? 'node-b' : 'the-same-id';
        if (name === 'fanout') {
          const sub = new zmq.Subscriber({ linger: 0, ...curve });
          sub.subscribe();
          sub.connect(endpoint);
          zsockets.push(sub);
        } else {
          const router = new zmq.Router({ linger: 0, routingId, ...curve });
          router.connect(endpoint, { routingId: 'target' });
          zsockets.push(router);
          // A dealer that says nothing ever, and one that sends junk under the same id.
          const dealer = new zmq.Dealer({ linger: 0, routingId, ...curve });
          dealer.connect(endpoint);
          zsockets.push(dealer);
          if (i % 5 === 0)
            void dealer.send([Buffer.from('junk'), Buffer.from([0xc1])]).catch(() => undefined);
        }
      }
    }
    // Some go away at once, reset or closed; the rest stay the length of the test.
    await sleep(500);
    for (const c of raw.slice(0, raw.length / 2)) c.reset();
    for (const s of zsockets.slice(0, zsockets.length / 3)) s.close();
    await waitFor(
      () => half.every((c) => c.closedAt !== undefined),
      HANDSHAKE_CLOSE_MS,
      'the child closed every half-open connection',
    );
    expect(target.child.running).toBe(true);

    // A proper runtime is served on every listener.
    const events: unknown[] = [];
    const key = childKeys?.publicKey;
    const e = endpoints();
    const runtime = cleanup.add(
      new ZLinkRuntime({
        meshes: {
          game: {
            rid: 'test-node',
            listen: { bindHost: '127.0.0.1', port: 0 },
            peers: [{ endpoint: e.mesh, rid: 'secure-node', ...(key && { publicKey: key }) }],
          },
        },
        clientServer: {
          secure: { client: { connect: [{ endpoint: e.clientServer, ...(key && { publicKey: key }) }] } },
        },
        fanout: {
          news: { subscriber: { connect: [{ endpoint: e.fanout, ...(key && { publicKey: key }) }] } },
        },
        ...(testKeys && { security: { curve: testKeys } }),
      }),
    );
    runtime.registerFanoutHandler({
      channel: 'news',
      kind: 'send',
      packet: 'notice',
      handler: (event: unknown) => void events.push(event),
      source: 'connection-fuzz',
    });
    await runtime.start();
    await runtime.waitForPeers('game', 1, 15000);
    await runtime.waitForCandidates('secure', 1, 15000);
    expect(
      await runtime.routeClient.requestToChannel('secure', 'echo', { n: 1 }).async({ timeoutMs: 5000 }),
    ).toEqual({ n: 1 });
    expect(
      await runtime.routeClient
        .requestToNode('game', 'secure-node', 'echo', { n: 2 })
        .async({ timeoutMs: 5000 }),
    ).toEqual({ n: 2 });
    await waitFor(
      () => runtime.snapshot().fanout[0]?.subscriber?.publishers[0]?.rid !== undefined,
      10000,
      'the publisher',
    );
    const deadline = Date.now() + 10000;
    while (events.length === 0 && Date.now() < deadline)
      await target.child.call({ type: 'publish', event: { n: 3 } });
    expect(events[0]).toEqual({ n: 3 });

    const report = await target.child.call({ type: 'report' });
    const memory = report.memory as NodeJS.MemoryUsage;
    console.log(
      `connection fuzz (${secure ? 'CURVE' : 'plain'}): ${raw.length + half.length} raw and ${zsockets.length} zeromq connections; ` +
        `child rss ${(memory.rss / 1048576).toFixed(1)} MB; counted ${JSON.stringify(report.counts)}`,
    );
    expect(memory.rss).toBeLessThan(400 * 1024 * 1024);
    expect(target.child.running).toBe(true);
  }, 120000);
});
