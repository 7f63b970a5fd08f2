import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import {
  FrameSplitter,
  SESSION_PROTOCOL_VERSION,
  SessionFrameKind,
  frame,
  packr,
} from '../../../lib/core/wire/index.js';

/** A server that records every frame a client sends and writes frames when the test says. */
export class ScriptedServer {
  readonly frames: unknown[][] = [];
  readonly connections: Socket[] = [];
  /** While true, a new connection is closed at once (a server the client cannot reach). */
  refusing = false;
  private readonly server: Server;

  private constructor(server: Server) {
    this.server = server;
  }

  static async start(): Promise<ScriptedServer> {
    const scripted = new ScriptedServer(createServer());
    scripted.server.on('connection', (socket) => {
      if (scripted.refusing) return void socket.destroy();
      scripted.connections.push(socket);
      const splitter = new FrameSplitter(1 << 20);
      socket.on('data', (chunk: Buffer) =>
        splitter.push(chunk, (body) => {
          scripted.frames.push(packr.unpack(body) as unknown[]);
          return true;
        }),
      );
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => scripted.server.listen(0, '127.0.0.1', resolve));
    return scripted;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Writes one frame to the latest connection. */
  send(items: unknown[]): void {
    this.latest().write(frame(packr.pack(items)));
  }

  latest(): Socket {
    const socket = this.connections.at(-1);
    if (!socket) throw new Error('no connection yet');
    return socket;
  }

  /** A Welcome; with `resume`, the resume items (docs/sessions-wire.md#resume-after-a-drop). */
  welcome(
    sessionId = 'session-1',
    resume?: { token: string; graceMs: number; received: number },
    heartbeatMs = 60_000,
  ): void {
    const items = [SessionFrameKind.Welcome, SESSION_PROTOCOL_VERSION, sessionId, heartbeatMs, 1 << 20, 64];
    this.send(resume ? [...items, resume.token, resume.graceMs, resume.received] : items);
  }

  /** The frames the client sent of one kind. */
  of(kind: number): unknown[][] {
    return this.frames.filter((f) => f[0] === kind);
  }

  async close(): Promise<void> {
    for (const socket of this.connections) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
