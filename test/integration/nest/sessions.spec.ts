import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  type INestApplicationContext,
  UseGuards,
} from '@nestjs/common';
import {
  MemoryLocationStore,
  OnSessionClose,
  OnSessionOpen,
  SessionHandler,
  type SessionCloseReason,
  ZLinkContext,
  ZLinkModule,
  type ZLinkOptions,
  ZLinkPayload,
  ZLinkRuntime,
  ZLinkSession,
  type ZLinkSessionContext,
  type ZLinkSessionHello,
} from '../../../lib/index.js';
import { ZLinkSessionClient } from '../../../lib/session-client/index.js';
import { waitFor } from '../../helpers/index.js';
import { bootApp } from './nest-app.js';

/**
 * The Nest surface of sessions: `@SessionHandler`s run through Nest's pipeline (a guard here) with
 * the session injected by `@ZLinkSession()`, `@OnSessionOpen` checks the Hello's token, and
 * `@OnSessionClose` hears the end — all discovered on a provider, over a real TCP client.
 */

function options(): ZLinkOptions {
  return {
    meshes: { game: { objectRole: 'server', listen: { bindHost: '127.0.0.1' } } },
    locationStore: { instance: new MemoryLocationStore() },
    sessions: { players: { mesh: 'game', listen: { bindHost: '127.0.0.1' } } },
  };
}

/** Lets only a logged-in session past (what a game's own guard would check). */
@Injectable()
class LoggedIn implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const ctx = context.switchToRpc().getContext<ZLinkSessionContext>();
    return ctx.session.data.user !== undefined;
  }
}

@Injectable()
class Lobby {
  readonly closed: [string, SessionCloseReason][] = [];

  @OnSessionOpen('players')
  open(_session: ZLinkSession, hello: ZLinkSessionHello): boolean {
    return typeof hello.token === 'string' && hello.token.startsWith('ticket:');
  }

  @SessionHandler('players', 'login')
  login(@ZLinkPayload('name') name: string, @ZLinkSession() session: ZLinkSession): { welcome: string } {
    session.data.user = name;
    return { welcome: name };
  }

  @UseGuards(LoggedIn)
  @SessionHandler('players', 'chat', { kind: 'send' })
  chat(@ZLinkPayload() text: string, @ZLinkContext() ctx: ZLinkSessionContext): void {
    ctx.session.push('chat', { from: ctx.session.data.user, text });
  }

  @OnSessionClose('players')
  close(session: ZLinkSession, reason: SessionCloseReason): void {
    this.closed.push([session.id, reason]);
  }
}

let app: INestApplicationContext | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function connect(token: string): Promise<ZLinkSessionClient> {
  const runtime = (app as INestApplicationContext).get(ZLinkRuntime);
  const port = Number((runtime.sessions.localEndpoint('players') as string).split(':').pop());
  const client = new ZLinkSessionClient({ host: '127.0.0.1', port, token });
  await client.connect();
  return client;
}

describe('sessions in a Nest app', () => {
  it('runs session handlers through the pipeline with the session injected, and the hooks', async () => {
    app = await bootApp({ zlink: ZLinkModule.forRoot(options()), providers: [Lobby] });
    await expect(connect('forged')).rejects.toMatchObject({ details: { reason: 'refused' } });
    const client = await connect('ticket:ada');
    const pushes: unknown[] = [];
    client.on('push', (packet: string, msg: unknown) => pushes.push([packet, msg]));
    client.send('chat', 'before login: the guard stops it');
    expect(await client.request('login', { name: 'ada' })).toEqual({ welcome: 'ada' });
    client.send('chat', 'hello');
    await waitFor(() => pushes.length === 1, 5000, 'the chat push');
    expect(pushes).toEqual([['chat', { from: 'ada', text: 'hello' }]]);
    const id = client.sessionId;
    await client.close();
    const lobby = app.get(Lobby);
    await waitFor(() => lobby.closed.length === 1, 5000, 'the close hook');
    expect(lobby.closed).toEqual([[id, 'normal']]);
  });

  it('refuses a session handler on a listener that is not configured, naming it', async () => {
    @Injectable()
    class Stray {
      @SessionHandler('nowhere', 'x')
      x(): void {}
    }
    await expect(bootApp({ zlink: ZLinkModule.forRoot(options()), providers: [Stray] })).rejects.toThrow(
      /session handler Stray\.x.*no session listener 'nowhere'/,
    );
  });
});
