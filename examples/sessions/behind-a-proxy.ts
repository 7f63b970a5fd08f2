// A session listener behind load balancers (HAProxy with `send-proxy` or `send-proxy-v2`, an AWS NLB
// with proxy protocol v2): each connection starts with the balancer's PROXY header, and
// `session.remoteAddress` is the player's address it names, not the balancer's. The open hook bans
// addresses; a handler answers the address it sees. It prints where each entry listens and exits.
// The key and certificate are the repository's test ones (test/fixtures/tls, for localhost); set
// TLS_KEY_FILE and TLS_CERT_FILE to use your own.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  MemoryLocationStore,
  OnSessionOpen,
  SessionHandler,
  ZLinkModule,
  ZLinkRuntime,
  ZLinkSession,
  type SessionListenerOptions,
} from 'nestjs-zlink';

// Your own list (a database, a feed); the balancer's addresses are never in it.
const banned = new Set(['203.0.113.66']);

@Injectable()
export class Doorman {
  // Runs after the Hello, before the Welcome: the address is already the player's.
  @OnSessionOpen('players')
  admit(session: ZLinkSession): boolean {
    return !banned.has(session.remoteAddress.address);
  }

  @SessionHandler('players', 'whereami')
  whereami(@ZLinkSession() session: ZLinkSession): string {
    const { address, port, family } = session.remoteAddress;
    return family === 'IPv6' ? `[${address}]:${port}` : `${address}:${port}`;
  }
}

const key = readFileSync(process.env.TLS_KEY_FILE ?? 'test/fixtures/tls/server.key');
const cert = readFileSync(process.env.TLS_CERT_FILE ?? 'test/fixtures/tls/server.crt');

// Only the balancers may connect: their private network (and this host, for a local HAProxy). A
// connection from anywhere else is refused before a byte of it is read.
const balancers = ['10.0.0.0/8', 'loopback'];

export const players: SessionListenerOptions = {
  mesh: 'world',
  listen: [
    // TCP behind the balancer: its PROXY header (v1 or v2), then the session wire.
    { kind: 'tcp', bindHost: '127.0.0.1', port: 0, proxyProtocol: true, trustedProxies: balancers },
    // TLS passed through (the balancer does not terminate it): the header comes before the handshake.
    {
      kind: 'tls',
      bindHost: '127.0.0.1',
      port: 0,
      tls: { key, cert },
      proxyProtocol: true,
      trustedProxies: balancers,
    },
  ],
  // The PROXY header, the TLS handshake and the Hello together, from the TCP accept.
  helloTimeoutMs: 5000,
};

export function gateway() {
  @Module({
    imports: [
      ZLinkModule.forRoot({
        locationStore: { instance: new MemoryLocationStore() },
        meshes: { world: { objectRole: 'server', listen: { bindHost: '127.0.0.1' } } },
        sessions: { players },
      }),
    ],
    providers: [Doorman],
  })
  class GatewayModule {}
  return NestFactory.createApplicationContext(GatewayModule, { logger: false });
}

export async function main(): Promise<void> {
  const app = await gateway();
  // `tcp://127.0.0.1:<port>` and `tls://127.0.0.1:<port>`: the addresses the balancers pass players to.
  for (const endpoint of app.get(ZLinkRuntime).sessions.endpoints('players')) console.log(endpoint);
  await app.close();
}

if (process.argv[1]?.endsWith('behind-a-proxy.js')) void main();
