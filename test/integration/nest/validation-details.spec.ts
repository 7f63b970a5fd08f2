/**
 * A `ValidationPipe` failure reaches the caller with what Nest's HTTP 400 carries (issue 51): the
 * body (`{ statusCode, message: [...], error }`) as the error's details and its messages in the error's
 * message, for a channel caller (its `RemoteError`) and for a game client of a session handler (the
 * Error frame, over a real TCP connection, read by the Node session client).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { type INestApplicationContext, Injectable, ValidationPipe } from '@nestjs/common';
import { IsInt, IsString, Min } from 'class-validator';
import {
  ChannelHandler,
  MemoryLocationStore,
  SessionHandler,
  ZLinkError,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkRuntime,
} from '../../../lib/index.js';
import { ZLinkSessionClient } from '../../../lib/session-client/index.js';
import { bootApp, rejectionOf } from './nest-app.js';

class JoinDto {
  @IsString() name!: string;
  @IsInt() @Min(1) level!: number;
}

@Injectable()
class ChannelHandlers {
  @ChannelHandler('billing', 'join')
  join(@ZLinkPayload(new ValidationPipe()) dto: JoinDto): string {
    return `joined ${dto.name}`;
  }
}

@Injectable()
class SessionHandlers {
  @SessionHandler('game', 'join')
  join(@ZLinkPayload(new ValidationPipe()) dto: JoinDto): string {
    return `joined ${dto.name}`;
  }
}

const BAD = { name: 7, level: 0 };
const VIOLATIONS = ['name must be a string', 'level must not be less than 1'];

let app: INestApplicationContext | undefined;
let client: ZLinkSessionClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await app?.close();
  app = undefined;
});

describe('validation details', () => {
  it("reach a channel caller's RemoteError: the body as details, the violations in the message", async () => {
    app = await bootApp({ providers: [ChannelHandlers] });
    const route = app.get(ZLinkRouteClient);
    await expect(route.requestToChannel('billing', 'join', { name: 'ada', level: 2 }).async()).resolves.toBe(
      'joined ada',
    );
    const error = await rejectionOf(() => route.requestToChannel('billing', 'join', BAD).async());
    expect(error).toBeInstanceOf(ZLinkError);
    expect(error.remote).toMatchObject({
      code: 'HandlerError',
      details: { statusCode: 400, error: 'Bad Request', message: expect.arrayContaining(VIOLATIONS) },
    });
    for (const violation of VIOLATIONS) expect(error.remote.message).toContain(violation);
    expect(error.details).toEqual(error.remote.details);
  });

  it("reach a game client in the Error frame of a session handler's failure", async () => {
    app = await bootApp({
      providers: [SessionHandlers],
      zlink: ZLinkModule.forRoot({
        meshes: { world: { objectRole: 'server', listen: { bindHost: '127.0.0.1' } } },
        locationStore: { instance: new MemoryLocationStore() },
        sessions: { game: { mesh: 'world', listen: { bindHost: '127.0.0.1', port: 0 } } },
      }),
    });
    const endpoint = app.get(ZLinkRuntime).sessions.localEndpoint('game') as string;
    client = new ZLinkSessionClient({ host: '127.0.0.1', port: Number(endpoint.split(':').pop()) });
    await client.connect();
    await expect(client.request('join', { name: 'ada', level: 2 })).resolves.toBe('joined ada');
    const error = await rejectionOf(() => (client as ZLinkSessionClient).request('join', BAD));
    expect(error).toBeInstanceOf(ZLinkError);
    expect(error.code).toBe('RemoteError');
    expect(error.remote).toMatchObject({
      code: 'HandlerError',
      details: { statusCode: 400, error: 'Bad Request', message: expect.arrayContaining(VIOLATIONS) },
    });
    for (const violation of VIOLATIONS) expect(error.message).toContain(violation);
    // The session goes on.
    await expect(client.request('join', { name: 'bob', level: 1 })).resolves.toBe('joined bob');
  });
});
