import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { launchChromium, servePage } from '../helpers/browser.js';
import type { ZLinkRuntime } from '../../lib/index.js';
import { Cleanup, freePort, waitFor } from '../helpers/index.js';
import { ScriptedSessionServer, TEST_TLS } from '../helpers/scripted-session-server.js';
import { RecordingProxy } from '../helpers/tcp-proxy.js';
import { LISTENER_TLS, endpointsOf, startScriptedGateway } from '../integration/sessions/scripted-gateway.js';

/**
 * The session client in a real browser: Debian's headless Chromium, driven by playwright-core, loads
 * a page served by the test that imports `nestjs-zlink/session-client/browser` as ES modules (no
 * bundler: lib's .ts transpiled as served, msgpackr's browser build through an import map), and plays
 * a session over ws:// and wss:// — the Hello's token, a reply, a push, its own Close — writing the
 * outcome into the page, where the test reads it. wss:// trusts the test CA's server certificate by
 * its key pin (`--ignore-certificate-errors-spki-list`), not by ignoring every certificate error.
 * With `resume`, the page's client survives a drop a TCP proxy makes (test/helpers/tcp-proxy.ts),
 * and a page reload (examples/sessions/browser-resume.ts); the resume time is logged.
 */

/** What `play` finds: the Welcome's session id, the replies, the pushes, the close event. */
interface Played {
  readonly sessionId: string;
  readonly echoed: unknown;
  readonly pushedReply: unknown;
  readonly pushes: unknown[][];
  readonly closes: unknown[];
}

/**
 * In the page: connect to `endpoint` with the token `ticket`, `echo` a message, ask for a `push`,
 * close; the outcome goes into `#result` as JSON (or the error, `{ error: { code, message, field } }`).
 */
async function play(page: Page, endpoint: string): Promise<Played | { error: Record<string, unknown> }> {
  await page.evaluate(async (url: string) => {
    type Client = {
      on(event: string, listener: (...args: unknown[]) => void): void;
      connect(): Promise<{ sessionId: string }>;
      request(packet: string, msg?: unknown): Promise<unknown>;
      close(): Promise<void>;
    };
    const page = globalThis as unknown as {
      zlink: { ZLinkSessionClient: new (options: object) => Client };
      document: { getElementById(id: string): { textContent: string } };
    };
    let outcome: unknown;
    try {
      const client = new page.zlink.ZLinkSessionClient({ endpoint: url, token: 'ticket' });
      const pushes: unknown[][] = [];
      const closes: unknown[] = [];
      client.on('push', (packet, msg) => pushes.push([packet, msg]));
      client.on('close', (close) => closes.push(close));
      const { sessionId } = await client.connect();
      const echoed = await client.request('echo', { n: 1 });
      const pushedReply = await client.request('push', 'hi');
      await client.close();
      outcome = { sessionId, echoed, pushedReply, pushes, closes };
    } catch (e) {
      const error = e as { code?: string; message?: string; details?: { field?: string } };
      outcome = { error: { code: error.code, message: error.message, field: error.details?.field } };
    }
    page.document.getElementById('result').textContent = JSON.stringify(outcome);
  }, endpoint);
  return JSON.parse((await page.textContent('#result')) as string) as
    Played | { error: Record<string, unknown> };
}

const PLAYED = {
  echoed: { n: 1 },
  pushedReply: 'ok',
  pushes: [['pushed', 'hi']],
  closes: [{ reason: 'normal', code: 1000, detail: '', by: 'client' }],
};

const cleanup = new Cleanup();
let browser: Awaited<ReturnType<typeof launchChromium>>;
let site: Awaited<ReturnType<typeof servePage>>;

beforeAll(async () => {
  site = await servePage();
  browser = await launchChromium([TEST_TLS.cert]);
}, 60000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

afterEach(() => cleanup.closeAll());

/** The browser's page with the entry loaded and evaluated. */
async function loaded(page = browser.page): Promise<Page> {
  await page.goto(site.url);
  await page.waitForFunction(() => (globalThis as { zlink?: unknown }).zlink !== undefined, null, {
    timeout: 20000,
  });
  return page;
}

describe('the browser entry in Chromium', () => {
  it('loads as ES modules, no bundler, and evaluates without an error', async () => {
    const page = await loaded();
    expect(await page.textContent('#status')).toBe('ready');
    expect(
      await page.evaluate(
        () => typeof (globalThis as { zlink?: { ZLinkSessionClient?: unknown } }).zlink?.ZLinkSessionClient,
      ),
    ).toBe('function');
    expect(browser.errors.filter((e) => e.startsWith('pageerror'))).toEqual([]);
  });

  it('refuses a tcp:// endpoint with a Configuration error naming endpoint', async () => {
    const page = await loaded();
    expect(await play(page, 'tcp://127.0.0.1:7000')).toEqual({
      error: expect.objectContaining({ code: 'Configuration', field: 'endpoint' }),
    });
  });

  it('rejects connect() with Unavailable when nothing listens on the ws:// port', async () => {
    const page = await loaded();
    const port = await freePort();
    expect(await play(page, `ws://127.0.0.1:${port}/play`)).toEqual({
      error: expect.objectContaining({ code: 'Unavailable' }),
    });
  });

  it.each(['ws', 'wss'] as const)(
    'logs in over %s://, gets a reply and a push (a scripted server)',
    async (scheme) => {
      const server = cleanup.add(await ScriptedSessionServer.start(scheme));
      const page = await loaded();
      expect(await play(page, server.endpoint)).toEqual({ sessionId: 's-1', ...PLAYED });
      expect(server.frames[0]).toEqual([1, 1, 'ticket']);
    },
  );

  it("runs the docs' example (examples/sessions/browser-player.ts), imported by the package's name", async () => {
    const server = cleanup.add(await ScriptedSessionServer.start('ws'));
    const page = await loaded();
    const lines = await page.evaluate(async (url: string) => {
      type Example = {
        joinGame(
          endpoint: string,
          ticket: string,
          show: (line: string) => void,
        ): Promise<{
          request(packet: string, msg?: unknown): Promise<unknown>;
          close(): Promise<void>;
        }>;
      };
      const shown: string[] = [];
      const { joinGame } = (await import('/examples/sessions/browser-player.js' as string)) as Example;
      const client = await joinGame(url, 'ticket', (line) => shown.push(line));
      await client.request('push', { card: 'ace' });
      await client.close();
      return shown;
    }, server.endpoint);
    expect(lines).toEqual([
      'joined as session s-1',
      'move: "ok"',
      'pushed: {"card":"ace"}',
      'closed: normal (by the client)',
    ]);
    expect(server.frames[0]).toEqual([1, 1, 'ticket']);
  });

  it('does not reach a wss:// server whose certificate it was not told to trust (the pin is what lets it)', async () => {
    const server = cleanup.add(await ScriptedSessionServer.start('wss'));
    const untrusting = cleanup.add(await launchChromium());
    expect(await play(await loaded(untrusting.page), server.endpoint)).toEqual({
      error: expect.objectContaining({ code: 'Unavailable' }),
    });
    expect(server.frames).toEqual([]);
  });
});

describe('the browser entry in Chromium against a gateway', () => {
  it.each([0, 1])(
    'logs in over the gateway endpoint %i (ws, wss), gets a reply and a push',
    async (entry) => {
      // The contract's WebSocket listeners (docs/sessions.md): ws on /play, and wss.
      const runtime = cleanup.add(
        await startScriptedGateway([
          { kind: 'websocket', bindHost: '127.0.0.1', port: 0, path: '/play' },
          { kind: 'websocket', bindHost: '127.0.0.1', port: 0, tls: LISTENER_TLS },
        ]),
      );
      const endpoint = endpointsOf(runtime)[entry] as string;
      expect(endpoint).toMatch(
        entry === 0 ? /^ws:\/\/127\.0\.0\.1:\d+\/play$/ : /^wss:\/\/127\.0\.0\.1:\d+\/$/,
      );
      const page = await loaded();
      expect(await play(page, endpoint)).toEqual({ sessionId: expect.any(String), ...PLAYED });
    },
  );
});

describe('the browser entry in Chromium, resuming after a drop', () => {
  /** A gateway whose websocket entry (on `/play`) the page reaches, through a proxy when asked. */
  async function resumableGateway(): Promise<{ runtime: ZLinkRuntime; endpoint: string; port: number }> {
    const runtime = cleanup.add(
      await startScriptedGateway([{ kind: 'websocket', bindHost: '127.0.0.1', port: 0, path: '/play' }]),
    );
    const endpoint = endpointsOf(runtime)[0] as string;
    return { runtime, endpoint, port: Number(new URL(endpoint).port) };
  }

  it('survives a forced drop: its request in flight gets its one result, the push sent while away arrives, the same session (read from the page)', async () => {
    const { runtime, port } = await resumableGateway();
    const proxy = cleanup.add(await RecordingProxy.start({ target: port }));
    const page = await loaded();
    const sessionId = await page.evaluate(async (url: string) => {
      type Client = {
        on(event: string, listener: (...args: unknown[]) => void): void;
        connect(): Promise<{ sessionId: string }>;
        request(packet: string, msg?: unknown): Promise<unknown>;
        readonly sessionId: string | undefined;
      };
      const g = globalThis as unknown as {
        zlink: { ZLinkSessionClient: new (options: object) => Client };
        played: { client: Client; events: unknown[][]; answers: unknown[] };
      };
      const client = new g.zlink.ZLinkSessionClient({
        endpoint: url,
        token: 'ticket',
        resume: true,
        reconnect: { initialMs: 50, maxMs: 200 },
      });
      const events: unknown[][] = [];
      for (const name of ['open', 'dropped', 'resumed', 'close', 'push'])
        client.on(name, (...args) => events.push([name, args, Date.now()]));
      g.played = { client, events, answers: [] };
      return (await client.connect()).sessionId;
    }, `ws://127.0.0.1:${proxy.port}/play`);

    // Nothing the page sends reaches the gateway any more: its request is lost on the way.
    proxy.stall('up');
    await page.evaluate(() => {
      const { played } = globalThis as unknown as {
        played: { client: { request(p: string, m: unknown): Promise<unknown> }; answers: unknown[] };
      };
      played.client.request('echo', 'in flight').then(
        (v) => played.answers.push(v),
        (e: { code?: string }) => played.answers.push({ error: e.code }),
      );
    });
    proxy.target = undefined;
    proxy.cut();
    const events = (name: string) =>
      `(globalThis.played.events.filter((e) => e[0] === ${JSON.stringify(name)}).length)`;
    await page.waitForFunction(`${events('dropped')} === 1`, null, { timeout: 20000 });
    await waitFor(
      () => runtime.sessions.session(sessionId)?.connected === false,
      20000,
      'the gateway saw the drop',
    );
    expect(runtime.sessions.session(sessionId)?.push('pushed', 'while away')).toBe(true);
    const reopenAt = Date.now();
    proxy.target = port;
    await page.waitForFunction(`${events('push')} === 1 && globalThis.played.answers.length === 1`, null, {
      timeout: 20000,
    });
    // The outcome, as the page writes it.
    await page.evaluate(async () => {
      const g = globalThis as unknown as {
        played: {
          client: {
            request(p: string, m: unknown): Promise<unknown>;
            readonly sessionId: string | undefined;
          };
          events: unknown[][];
          answers: unknown[];
        };
        document: { getElementById(id: string): { textContent: string } };
      };
      const after = await g.played.client.request('echo', 'after');
      g.document.getElementById('result').textContent = JSON.stringify({
        events: g.played.events,
        answers: [...g.played.answers, after],
        sessionId: g.played.client.sessionId,
      });
    });
    const outcome = JSON.parse((await page.textContent('#result')) as string) as {
      events: [string, unknown[], number][];
      answers: unknown[];
      sessionId: string;
    };
    expect(outcome.events.map(([name, args]) => [name, name === 'push' ? args : undefined])).toEqual([
      ['open', undefined],
      ['dropped', undefined],
      ['resumed', undefined],
      ['push', ['pushed', 'while away']],
    ]);
    expect((outcome.events[2]?.[1][0] as { sessionId: string }).sessionId).toBe(sessionId);
    expect(outcome.sessionId).toBe(sessionId);
    // The request the gateway never got was sent again after the resume: one answer.
    expect(outcome.answers).toEqual(['in flight', 'after']);
    const pushAt = outcome.events[3]?.[2] as number;
    process.stdout.write(
      `browser resume: proxy open again -> first held push ${pushAt - reopenAt} ms ` +
        `(dropped -> held push ${pushAt - (outcome.events[1]?.[2] as number)} ms, away while the test pushed)\n`,
    );
  });

  it('keeps its seat across a page reload (examples/sessions/browser-resume.ts): resumeState in sessionStorage, the push sent during the reload', async () => {
    const { runtime, endpoint } = await resumableGateway();
    const play = (page: Page) =>
      page.evaluate(async (url: string) => {
        type Example = {
          playResumable(
            endpoint: string,
            ticket: string,
            page: unknown,
            show: (line: string) => void,
          ): Promise<{ readonly sessionId: string | undefined }>;
        };
        const g = globalThis as unknown as { lines: string[] };
        g.lines = [];
        const { playResumable } = (await import('/examples/sessions/browser-resume.js' as string)) as Example;
        const client = await playResumable(url, 'ticket', globalThis, (line) => g.lines.push(line));
        return client.sessionId as string;
      }, endpoint);
    const page = await loaded();
    const sessionId = await play(page);
    expect(await page.evaluate(() => (globalThis as unknown as { lines: string[] }).lines)).toEqual([
      `joined as session ${sessionId}`,
    ]);
    await page.reload();
    await waitFor(
      () => runtime.sessions.session(sessionId)?.connected === false,
      20000,
      'the gateway saw the drop',
    );
    expect(runtime.sessions.session(sessionId)?.push('pushed', 'during the reload')).toBe(true);
    await loaded(page);
    expect(await play(page)).toBe(sessionId);
    await page.waitForFunction(
      () => (globalThis as unknown as { lines: string[] }).lines.length === 2,
      null,
      {
        timeout: 20000,
      },
    );
    expect(await page.evaluate(() => (globalThis as unknown as { lines: string[] }).lines)).toEqual([
      `back in session ${sessionId}`,
      'pushed: "during the reload"',
    ]);
    // The token was used: sessionStorage no longer holds it (the page keeps a new one when it hides).
    expect(
      await page.evaluate(
        () => (globalThis as unknown as { sessionStorage: { length: number } }).sessionStorage.length,
      ),
    ).toBe(0);
  });
});
