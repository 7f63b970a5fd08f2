/**
 * A server writes the replies of the frame it just read before it asks zeromq for its next message
 * (`SocketPump.writePending`). zeromq.js reads a socket's ZMQ_EVENTS after every send while a receive is
 * pending, so the other order costs each reply three more system calls. Watched on zeromq.js's own
 * `send` and `receive` (wrapped, never replaced): at every send that carries a reply, was a receive of
 * that socket pending?
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import * as zmq from 'zeromq';
import { RecordKind, decodeFrame } from '../../../lib/core/index.js';
import { Cleanup } from '../../helpers/index.js';
import { startRuntime, listen, waitForCandidates } from '../client-server/harness.js';
import { endpointOf, startNode } from '../route-mesh/harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

type Method = (this: zmq.Socket, ...args: unknown[]) => unknown;

/** The prototype that owns zeromq.js's native `name` (its socket classes inherit it). */
function ownerOf(name: 'send' | 'receive'): object {
  let o: object | null = zmq.Router.prototype;
  while (o !== null && !Object.prototype.hasOwnProperty.call(o, name)) o = Object.getPrototypeOf(o) as object;
  if (o === null) throw new Error(`zeromq.js has no ${name}`);
  return o;
}

/**
 * For each send of a reply on the socket bound at `endpoint()`: whether a receive of that socket was
 * pending then. Restored by `cleanup`.
 */
function watchReplies(endpoint: () => string): boolean[] {
  const pending = new WeakSet<zmq.Socket>();
  const seen: boolean[] = [];
  const wrap = (name: 'send' | 'receive', around: (socket: zmq.Socket, args: unknown[]) => void): void => {
    const owner = ownerOf(name);
    const original = (owner as Record<string, Method>)[name] as Method;
    Object.defineProperty(owner, name, {
      configurable: true,
      writable: true,
      value: function (this: zmq.Socket, ...args: unknown[]) {
        around(this, args);
        const result = original.apply(this, args);
        if (name === 'receive') {
          pending.add(this);
          const done = (): void => void pending.delete(this);
          void (result as Promise<unknown>).then(done, done);
        }
        return result;
      },
    });
    // Registered before the runtimes: closed after them (the list closes last first).
    cleanup.add({
      close: () =>
        Object.defineProperty(owner, name, { configurable: true, writable: true, value: original }),
    });
  };
  // A heartbeat (a Ping, or a State) the server wrote on its own, between two frames, may still be on
  // its way when the next frame's reply is made: the reply waits behind it and leaves once the receive
  // is asked for, whatever the order of the loop (seen under load: one reply in 50). Such a reply is
  // excused, once per heartbeat; a reply with no heartbeat before it since the last reply is not.
  const behindOther = new WeakSet<zmq.Socket>();
  wrap('receive', () => undefined);
  wrap('send', (socket, [message]) => {
    if (!(socket instanceof zmq.Router) || socket.lastEndpoint !== endpoint()) return;
    const body = Array.isArray(message) ? (message[message.length - 1] as Buffer) : (message as Buffer);
    const { records } = decodeFrame(body);
    const replies = records.some((r) => r.kind === RecordKind.Reply);
    const others = records.some((r) => r.kind !== RecordKind.Reply);
    if (!replies) {
      if (others) behindOther.add(socket);
      return;
    }
    seen.push(pending.has(socket) && !others && !behindOther.has(socket));
    behindOther.delete(socket);
  });
  return seen;
}

const REQUESTS = 50;

describe('a server writes a frame’s replies before it asks for the next message', () => {
  it('ClientServer: no reply leaves while the listener waits in receive()', async () => {
    let endpoint = '';
    const atReply = watchReplies(() => endpoint);
    const server = await startRuntime(cleanup, { clientServer: { echo: { server: { listen } } } }, [
      ['request', 'echo', (p) => p],
    ]);
    endpoint = server.endpoint('echo') as string;
    const client = await startRuntime(cleanup, {
      clientServer: { echo: { client: { connect: [endpoint] } } },
    });
    await waitForCandidates(client, 'echo', 1);
    for (let i = 0; i < REQUESTS; i++)
      expect(await client.routeClient.requestToChannel('echo', 'echo', i).async()).toBe(i);
    expect(atReply.length).toBeGreaterThanOrEqual(REQUESTS);
    expect(atReply.filter((wasPending) => wasPending)).toEqual([]);
  });

  it('RouteMesh: no reply leaves while the MeshNode waits in receive()', async () => {
    let endpoint = '';
    const atReply = watchReplies(() => endpoint);
    const b = await startNode(cleanup, { rid: 'node-b', nodeHandlers: [['request', 'echo', (p) => p]] });
    endpoint = endpointOf(b);
    const a = await startNode(cleanup, { rid: 'node-a', peers: [endpoint] });
    await a.waitForPeers('game', 1);
    for (let i = 0; i < REQUESTS; i++)
      expect(await a.routeClient.requestToNode('game', 'node-b', 'echo', i).async()).toBe(i);
    expect(atReply.length).toBeGreaterThanOrEqual(REQUESTS);
    expect(atReply.filter((wasPending) => wasPending)).toEqual([]);
  });
});
