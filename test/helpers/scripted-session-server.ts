import { readFileSync } from 'node:fs';
import { type Server as HttpServer, createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import {
  type AddressInfo,
  type Server as NetServer,
  type Socket,
  createServer as createTcpServer,
} from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { type WebSocket, WebSocketServer } from 'ws';
import {
  FrameSplitter,
  SESSION_PROTOCOL_VERSION,
  SessionFrameKind,
  frame,
  packr,
} from '../../lib/core/wire/index.js';

/** Every session listener kind a client can reach: the endpoint's scheme. */
export type ScriptedScheme = 'tcp' | 'tls' | 'ws' | 'wss';

/** The test CA's server certificate and key (test/fixtures/tls: localhost, 127.0.0.1, ::1). */
export const TEST_TLS = {
  key: readFileSync(join('test', 'fixtures', 'tls', 'server.key')),
  cert: readFileSync(join('test', 'fixtures', 'tls', 'server.crt')),
  ca: readFileSync(join('test', 'fixtures', 'tls', 'ca.crt')),
};

/** One client connection as the script sees it: its frames go out whole, framed as its scheme says. */
interface ScriptedConnection {
  send(items: unknown[]): void;
  /** Bytes as they are (a broken frame, a text message on a WebSocket). */
  raw(data: Uint8Array | string): void;
  end(): void;
}

/**
 * A session server in a few lines, over any of the four carriers, for the clients' own tests (no
 * runtime, no listener): it welcomes every Hello (session ids `s-1`, `s-2`, ...), answers `echo` with
 * the request's message, answers `push` with a Push (`pushed`, the message) and then the Reply `ok`,
 * answers Ping with Pong, and records every frame a client sent. It speaks the wire of
 * docs/sessions-wire.md: length-prefixed frames on tcp/tls, one binary message per frame on ws/wss.
 */
export class ScriptedSessionServer {
  /** Every frame the clients sent, decoded, in order. */
  readonly frames: unknown[][] = [];
  /** Each WebSocket message a client sent, as it arrived (ws/wss only). */
  readonly messages: Uint8Array[] = [];
  readonly connections: ScriptedConnection[] = [];
  private sessions = 0;

  private constructor(
    readonly scheme: ScriptedScheme,
    private readonly server: NetServer | HttpServer,
    readonly path: string,
  ) {}

  static async start(scheme: ScriptedScheme, path = '/play'): Promise<ScriptedSessionServer> {
    const stream = scheme === 'tcp' || scheme === 'tls';
    const server = stream
      ? scheme === 'tls'
        ? createTlsServer({ key: TEST_TLS.key, cert: TEST_TLS.cert })
        : createTcpServer()
      : scheme === 'wss'
        ? createHttpsServer({ key: TEST_TLS.key, cert: TEST_TLS.cert })
        : createHttpServer();
    const scripted = new ScriptedSessionServer(scheme, server, stream ? '' : path);
    if (stream)
      server.on(scheme === 'tls' ? 'secureConnection' : 'connection', (s: Socket) => scripted.stream(s));
    else
      new WebSocketServer({ server: server as HttpServer, path }).on('connection', (ws) =>
        scripted.message(ws),
      );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return scripted;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The endpoint a client takes, as `runtime.sessions.endpoint()` would give it. */
  get endpoint(): string {
    return `${this.scheme}://127.0.0.1:${this.port}${this.path}`;
  }

  /** The frames the clients sent of one kind. */
  of(kind: number): unknown[][] {
    return this.frames.filter((f) => f[0] === kind);
  }

  latest(): ScriptedConnection {
    const connection = this.connections.at(-1);
    if (!connection) throw new Error('no connection yet');
    return connection;
  }

  private stream(socket: Socket): void {
    const splitter = new FrameSplitter(1 << 20);
    const connection: ScriptedConnection = {
      send: (items) => socket.write(frame(packr.pack(items))),
      raw: (data) => socket.write(data),
      end: () => socket.destroy(),
    };
    this.connections.push(connection);
    socket.on('data', (chunk: Buffer) =>
      splitter.push(chunk, (body) => {
        this.answer(connection, packr.unpack(body) as unknown[]);
        return true;
      }),
    );
    socket.on('error', () => undefined);
  }

  private message(ws: WebSocket): void {
    const connection: ScriptedConnection = {
      // A copy: packr's result is a view of its reused buffer.
      send: (items) => ws.send(packr.pack(items).slice()),
      raw: (data) => ws.send(data),
      end: () => ws.terminate(),
    };
    this.connections.push(connection);
    ws.on('message', (data: Buffer) => {
      this.messages.push(new Uint8Array(data));
      this.answer(connection, packr.unpack(data) as unknown[]);
    });
    ws.on('error', () => undefined);
  }

  private answer(connection: ScriptedConnection, items: unknown[]): void {
    this.frames.push(items);
    const [kind, correlation, packet, msg] = items;
    switch (kind) {
      case SessionFrameKind.Hello:
        return connection.send([
          SessionFrameKind.Welcome,
          SESSION_PROTOCOL_VERSION,
          `s-${++this.sessions}`,
          60_000,
          1 << 20,
          64,
        ]);
      case SessionFrameKind.Request:
        if (packet === 'push') connection.send([SessionFrameKind.Push, 'pushed', msg]);
        return connection.send([SessionFrameKind.Reply, correlation, packet === 'echo' ? msg : 'ok']);
      case SessionFrameKind.Ping:
        return connection.send([SessionFrameKind.Pong]);
      case SessionFrameKind.Close:
        return connection.end();
    }
  }

  async close(): Promise<void> {
    for (const connection of this.connections) connection.end();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
