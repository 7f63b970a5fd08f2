/**
 * NestJS TCP transport client (`ClientProxyFactory`): `send` for requests, `emit` for events.
 * Usage: BENCH_ENDPOINT=tcp://host:port node nest-tcp-client.js
 */
import 'reflect-metadata';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { clientProcess } from './harness.js';

clientProcess(async (endpoint) => {
  const { hostname, port } = new URL(endpoint);
  const client = ClientProxyFactory.create({
    transport: Transport.TCP,
    options: { host: hostname, port: Number(port) },
  });
  await client.connect();
  const socket = client.unwrap<Socket>();
  let drained: Promise<unknown> | undefined;
  return {
    request: (payload) => lastValueFrom(client.send('echo', payload)),
    send: (payload) => {
      // `emit` writes at once (it is hot); Nest has no admission of its own, so a full socket
      // buffer (Node's write backpressure) is what makes the caller wait.
      client.emit('ingest', payload);
      if (!socket.writableNeedDrain) return undefined;
      return (drained ??= once(socket, 'drain').finally(() => (drained = undefined)));
    },
    count: () => lastValueFrom(client.send<number>('count', {})),
    close: async () => {
      await client.close();
    },
  };
});
