/**
 * What the in-process instruments share (call-overhead, send-overhead, sequential-overhead): a ZLink
 * client and server as bare runtimes in one process, on ClientServer channel `bench` or on mesh `game`
 * with channel `bench` (the server a Server member, the client a Client member).
 */
import type { ZLinkOptions } from '../lib/core/index.js';
import { ZLinkRuntime } from '../lib/runtime/index.js';

export const listen = { port: 0, bindHost: '127.0.0.1' };

/** How long the client may take to see its server: long, since valgrind runs these 50-100 times slower. */
export const READY_MS = 60_000;

/** A pair of runtimes in this process, started; the client sees the server. */
export interface RuntimePair {
  readonly client: ZLinkRuntime;
  readonly server: ZLinkRuntime;
  close(): Promise<void>;
}

/**
 * Starts the pair on `route` (`cs`: ClientServer; `mesh`: a RouteMesh of two nodes) with `extra` options
 * on both; `register` adds the server's handlers before it starts.
 */
export async function startPair(
  route: 'cs' | 'mesh',
  register: (server: ZLinkRuntime) => void,
  extra: Partial<ZLinkOptions> = {},
): Promise<RuntimePair> {
  const server = new ZLinkRuntime(
    route === 'cs'
      ? { ...extra, clientServer: { bench: { server: { listen } } } }
      : { ...extra, meshes: { game: { rid: 'server', listen, channels: { bench: { role: 'server' } } } } },
  );
  register(server);
  await server.start();
  const client = new ZLinkRuntime(
    route === 'cs'
      ? { ...extra, clientServer: { bench: { client: { connect: [server.endpoint('bench') as string] } } } }
      : {
          ...extra,
          meshes: {
            game: {
              rid: 'client',
              listen,
              peers: [{ endpoint: server.meshEndpoint('game') as string }],
              channels: { bench: { role: 'client' } },
            },
          },
        },
  );
  await client.start();
  await client.waitForCandidates('bench', 1, READY_MS);
  return {
    client,
    server,
    async close() {
      await client.close();
      await server.close();
    },
  };
}

/** Channel `bench`'s request handler `echo`: it answers its payload. */
export function registerEcho(server: ZLinkRuntime): void {
  server.registerChannelHandler({
    channel: 'bench',
    kind: 'request',
    packet: 'echo',
    handler: (m: unknown) => m,
    source: 'echo',
  });
}
