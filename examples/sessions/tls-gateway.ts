// One session listener on two entries: the session wire over plain TCP for native clients on a trusted
// network, and the same wire inside TLS for everyone else, with no terminator in front. Both entries
// share the listener's handlers, hooks and `maxSessions`. It prints where each entry listens and exits.
// The key and certificate are the repository's test ones (test/fixtures/tls, for localhost); set
// TLS_KEY_FILE and TLS_CERT_FILE to use your own.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  MemoryLocationStore,
  SessionHandler,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRuntime,
  type SessionListenerOptions,
} from 'nestjs-zlink';

@Injectable()
export class Greeter {
  // Runs for a session on either entry.
  @SessionHandler('players', 'hello')
  hello(@ZLinkPayload() name: string): string {
    return `hello, ${name}`;
  }
}

// The PEM contents, not paths: read them from wherever you keep them (files, a secret store).
const key = readFileSync(process.env.TLS_KEY_FILE ?? 'test/fixtures/tls/server.key');
const cert = readFileSync(process.env.TLS_CERT_FILE ?? 'test/fixtures/tls/server.crt');

export const players: SessionListenerOptions = {
  mesh: 'world',
  listen: [
    // Native clients on a trusted network: plain TCP.
    { kind: 'tcp', bindHost: '127.0.0.1', port: 0 },
    // Everyone else: TLS 1.2 or later (`minVersion: 'TLSv1.3'` to refuse 1.2).
    { kind: 'tls', bindHost: '127.0.0.1', port: 0, tls: { key, cert } },
  ],
  // Sessions open at once over both entries together.
  maxSessions: 50_000,
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
    providers: [Greeter],
  })
  class GatewayModule {}
  return NestFactory.createApplicationContext(GatewayModule, { logger: false });
}

export async function main(): Promise<void> {
  const app = await gateway();
  // `tcp://127.0.0.1:<port>` and `tls://127.0.0.1:<port>`, in the order of `listen`.
  for (const endpoint of app.get(ZLinkRuntime).sessions.endpoints('players')) console.log(endpoint);
  await app.close();
}

if (process.argv[1]?.endsWith('tls-gateway.js')) void main();
