import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ZLinkError, type ZLinkSession, type ZLinkSessionContext } from '../../lib/core/index.js';
import type { ZLinkRuntime } from '../../lib/runtime/index.js';
import { csharpTools, howToInstall } from '../../scripts/system-deps.mjs';
import { Cleanup, waitFor } from '../helpers/index.js';
import { runCommand } from '../helpers/run-node.js';
import { RecordingProxy } from '../helpers/tcp-proxy.js';
import { testTls } from '../helpers/test-tls.js';
import {
  type GatewaySetup,
  RawPeer,
  gatewayOptions,
  portOf,
  startGateway,
} from '../integration/sessions/harness.js';
import { read, sectionOf } from '../docs/markdown.js';

/**
 * docs/sessions-wire.md claims a client in any language can be written from it alone. This compiles
 * one that was — the C# client users drop into a Unity project, clients/csharp/ZLinkSession — with
 * Debian's mcs, together with a small program that drives it (test/clients/csharp/SessionClientRun.cs),
 * and runs that with mono against a live gateway, on each of its listener kinds (tcp, tls, websocket):
 * one child process per run, its outcomes one line each on stdout. Resume after a drop runs through a
 * TCP proxy the test cuts. It also compiles docs/sessions.md's C# example against the client.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLIENT_DIR = join(root, 'clients', 'csharp', 'ZLinkSession');
const RUNNER = join(root, 'test', 'clients', 'csharp', 'SessionClientRun.cs');
const CA = join(root, 'test', 'fixtures', 'tls', 'ca.crt');
const RUN_TIMEOUT_MS = 30000;

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

let buildDir = '';
let runner = '';

/**
 * mcs and mono, or a failure with the install hint: CI installs them (scripts/setup.sh), and a skipped
 * proof of the page would read like a passing one.
 */
function tools(): { mcs: string; mono: string } {
  const found = csharpTools();
  if (found) return found;
  throw new Error(
    'mcs and mono are not on PATH; the C# session client test compiles with mcs and runs with mono.\n' +
      howToInstall(['mono-mcs']),
  );
}

/** Compiles `sources` with mcs into `out` (C# 7.2, the newest mcs has; every warning an error). */
function compile(out: string, sources: string[], extra: string[] = []): void {
  const result = spawnSync(
    tools().mcs,
    ['-langversion:7.2', '-warn:4', '-warnaserror', '-nologo', `-out:${out}`, ...extra, ...sources],
    { encoding: 'utf8', timeout: 120000 },
  );
  if (result.status !== 0)
    throw new Error(`mcs failed (${result.status ?? result.signal}):\n${result.stdout}${result.stderr}`);
}

const clientSources = (): string[] =>
  readdirSync(CLIENT_DIR)
    .filter((f) => f.endsWith('.cs'))
    .map((f) => join(CLIENT_DIR, f));

beforeAll(() => {
  buildDir = mkdtempSync(join(tmpdir(), 'zlink-csharp-'));
  runner = join(buildDir, 'run.exe');
  compile(runner, [...clientSources(), RUNNER]);
}, 180000);

afterAll(() => {
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

/** Runs a scenario to its end and returns its outcome lines by name; a run past the bound is killed. */
async function run(scenario: string, args: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const argv = [runner, scenario, ...Object.entries(args).flatMap(([k, v]) => [`--${k}`, v])];
  const { code, out, err } = await runCommand(tools().mono, argv, {
    env: process.env,
    limitMs: RUN_TIMEOUT_MS,
  });
  if (code !== 0) throw new Error(`mono ${scenario} exited ${code}: ${err || '(no stderr)'}\nstdout: ${out}`);
  const seen: Record<string, unknown> = {};
  for (const line of out.trim().split('\n')) {
    const space = line.indexOf(' ');
    seen[line.slice(0, space)] = JSON.parse(line.slice(space + 1));
  }
  if (!('done' in seen)) throw new Error(`mono ${scenario} did not finish: ${out}`);
  return seen;
}

/** Bytes as the runner prints them: `{ bin: '<hex>' }`, anywhere in a value. */
function binAsHex(value: unknown): unknown {
  if (value instanceof Uint8Array) return { bin: Buffer.from(value).toString('hex') };
  if (Array.isArray(value)) return value.map(binAsHex);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, binAsHex(v)]));
  return value;
}

const bytes = (n: number): { bin: string } => ({
  bin: Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) & 0xff)).toString('hex'),
});
const counted = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** What the runner's every-type payload is once the gateway has decoded it (JavaScript values). */
const ALL_TYPES_AS_JS = {
  nil: null,
  true: true,
  false: false,
  fixint: 7,
  uint8: 200,
  uint16: 60000,
  uint32: 4000000000,
  past32: 2 ** 40,
  uint64: 2n ** 53n + 1n,
  negFixint: -5,
  int8: -100,
  int16: -30000,
  int32: -2000000000,
  negPast32: -(2 ** 40),
  int64: -(2n ** 53n) - 1n,
  float32: 1.5,
  float64: 3.25,
  wholeDouble: 2,
  fixstr: 'héllo',
  str8: 'a'.repeat(40),
  str16: 'b'.repeat(300),
  str32: 'c'.repeat(70000),
  bin8: bytes(5),
  bin16: bytes(300),
  bin32: bytes(70000),
  fixarray: [1, 'two', null],
  array16: counted(20),
  fixmap: { a: 1 },
  map16: Object.fromEntries(counted(20).map((i) => [`k${i}`, i])),
  intKeys: { '1': 'one' },
  nested: { list: [{ deep: [true] }] },
};

interface Gateway {
  readonly runtime: ZLinkRuntime;
  readonly port: number;
  readonly received: unknown[];
  readonly notes: unknown[];
  readonly closes: string[];
  readonly drops: string[];
  readonly resumes: string[];
}

const session = (ctx: unknown): ZLinkSession => (ctx as ZLinkSessionContext).session;

/** A gateway on the listener options given, with the runner's handlers and `more` (a test's own). */
async function gateway(
  listener: Record<string, unknown> = {},
  more: GatewaySetup['handlers'] = {},
): Promise<Gateway> {
  const received: unknown[] = [];
  const notes: unknown[] = [];
  const closes: string[] = [];
  const drops: string[] = [];
  const resumes: string[] = [];
  const runtime = await startGateway(gatewayOptions(listener), {
    handlers: {
      echo: {
        fn: (payload, ctx) => {
          received.push(payload);
          return { echo: payload, sessionId: session(ctx).id };
        },
      },
      note: {
        kind: 'send',
        fn: (payload, ctx) => {
          notes.push(payload);
          session(ctx).push('noted', { got: payload });
        },
      },
      fail: {
        fn: (payload) => {
          throw new Error(`failed: ${String(payload)}`);
        },
      },
      invalid: {
        fn: () => {
          throw new ZLinkError('InvalidArgument', 'name is required', { details: { field: 'name' } });
        },
      },
      burst: {
        fn: (payload, ctx) => {
          for (let i = 0; i < (payload as number); i++) session(ctx).push('tick', i);
          return 'done';
        },
      },
      slow: {
        fn: (payload) => new Promise((resolve) => setTimeout(() => resolve('late'), payload as number)),
      },
      closeMe: {
        fn: (_payload, ctx) =>
          new Promise((resolve) =>
            setTimeout(() => {
              session(ctx).close('goingAway', 'server restarts');
              resolve('too late');
            }, 50),
          ),
      },
      ...more,
    },
    onOpen: (_session, hello) => hello.token === 'csharp',
    onClose: (_session, reason) => void closes.push(reason),
    onDropped: (_session, reason) => void drops.push(reason),
    onResumed: (s) => void resumes.push(s.id),
  });
  cleanup.add(runtime);
  return { runtime, port: portOf(runtime), received, notes, closes, drops, resumes };
}

const TLS = testTls();

/** A listener kind's `sessions.game` options, and the endpoint of a port of it (the gateway's, or a proxy's). */
const kinds = {
  tcp: { listener: {}, endpoint: (port: number) => `tcp://127.0.0.1:${port}` },
  tls: {
    listener: {
      listen: { bindHost: '127.0.0.1', port: 0, kind: 'tls', tls: { key: TLS.key, cert: TLS.cert } },
    },
    // The test certificate names localhost.
    endpoint: (port: number) => `tls://localhost:${port}`,
  },
  websocket: {
    listener: { listen: { bindHost: '127.0.0.1', port: 0, kind: 'websocket', path: '/play' } },
    endpoint: (port: number) => `ws://127.0.0.1:${port}/play`,
  },
} satisfies Record<string, { listener: Record<string, unknown>; endpoint: (port: number) => string }>;

describe('the C# client, written from docs/sessions-wire.md alone, compiled with mcs and run on mono', () => {
  it("encodes and decodes every msgpack form, refuses hostile bytes, and writes the wire page's example bytes", async () => {
    const seen = await run('codec', { doc: join(root, 'docs', 'sessions-wire.md') });
    expect(seen.codec).toEqual({ docRows: 7, failures: [] });
  });

  // Each kind of the gateway's listener itself: the wire's framing on TCP and inside TLS (the test CA),
  // and one binary message per frame on a WebSocket at its path.
  describe.each(['tcp', 'tls', 'websocket'] as const)('over %s', (kind) => {
    it('is welcomed, round-trips every msgpack type, gets errors, pushes in order and paced replies, and closes', async () => {
      // Frames up to 256 KiB: the payload's str 32 and bin 32 (70,000 bytes each) need more than 64 KiB.
      const gw = await gateway({ maxFrameBytes: 262144, ...kinds[kind].listener });
      const seen = await run('main', { endpoint: kinds[kind].endpoint(gw.port), token: 'csharp', ca: CA });

      const welcome = seen.welcome as Record<string, unknown>;
      expect(welcome).toEqual({
        version: 1,
        sessionId: expect.any(String),
        heartbeatMs: 10000,
        maxFrameBytes: 262144,
        maxInFlight: 64,
      });
      // One connection, one session: the handler ran under the id the Welcome gave.
      expect(seen.echoSessionId).toBe(welcome.sessionId);
      // C# -> server: every type arrived as the JavaScript value it stands for; server -> C#: what came
      // back is what the client expected (the runner compares value and .NET type).
      expect(binAsHex(gw.received[0])).toEqual(ALL_TYPES_AS_JS);
      expect(seen.roundTrip).toEqual({ ok: true, diff: null });

      expect(seen.noHandler).toMatchObject({ kind: 'Remote', code: 'NoHandler' });
      expect(seen.handlerError).toMatchObject({
        kind: 'Remote',
        code: 'HandlerError',
        message: expect.stringContaining('failed: boom'),
      });
      expect(seen.invalid).toMatchObject({
        kind: 'Remote',
        code: 'InvalidArgument',
        message: 'name is required',
        details: { field: 'name' },
      });
      expect(seen.sent).toBe(true);
      expect(seen.push).toEqual(['noted', { got: 7 }]);
      expect(seen.burst).toEqual({
        pushes: [
          ['tick', 0],
          ['tick', 1],
          ['tick', 2],
        ],
        reply: 'done',
      });
      // Twice maxInFlight and more at once: held back by the client, never a tooManyInFlight close.
      expect(seen.many).toEqual({ count: 133, allOwn: true });
      expect(seen.timeout).toMatchObject({ kind: 'Timeout' });
      expect(seen.afterTimeout).toBe('after');
      expect(seen.tooLarge).toMatchObject({ kind: 'ArgumentException' });

      expect(seen.closed).toEqual({
        by: 'Client',
        code: 1000,
        reason: 'normal',
        detail: 'bye',
        mayReconnect: true,
      });
      expect(seen.afterClose).toEqual({
        request: expect.objectContaining({ kind: 'Closed' }),
        send: false,
        isOpen: false,
      });
      await waitFor(() => gw.closes.length > 0, 5000, 'the gateway hearing the close');
      expect(gw.closes).toEqual(['normal']);
    });
  });

  it("refuses a TLS server whose certificate does not chain to the CA it trusts or the system's, or names another host", async () => {
    const gw = await gateway(kinds.tls.listener);
    const endpoint = kinds.tls.endpoint(gw.port);
    // The server's own certificate as the "CA": it is no CA, so the chain cannot end there.
    const wrongCa = join(root, 'test', 'fixtures', 'tls', 'server.crt');
    const cases: Record<string, string>[] = [{}, { ca: wrongCa }, { ca: CA, tlsName: 'example.com' }];
    for (const args of cases) {
      const seen = await run('refused', { endpoint, token: 'csharp', ...args });
      expect(seen.connect).toMatchObject({
        kind: 'Closed',
        closed: {
          by: 'Connection',
          code: null,
          reason: 'lost',
          detail: expect.stringContaining('could not connect'),
        },
      });
    }
    expect(gw.closes).toEqual([]);
  });

  it('is refused with close code 1006 when the application rejects its token, and told not to retry it', async () => {
    const gw = await gateway();
    const seen = await run('refused', { endpoint: `tcp://127.0.0.1:${gw.port}`, token: 'not-csharp' });
    const refused = {
      by: 'Server',
      code: 1006,
      reason: 'refused',
      detail: expect.any(String),
      mayReconnect: false,
    };
    expect(seen.connect).toMatchObject({ kind: 'Closed', closed: refused });
    expect(seen.closed).toEqual(refused);
  });

  it('keeps an idle session open past the idle timeout with its heartbeats', async () => {
    const gw = await gateway({ heartbeatMs: 200, idleTimeoutMs: 600 });
    // The control: a peer that says Hello and then nothing is closed idleTimeout with these settings.
    const silent = cleanup.add(new RawPeer(gw.port));
    await silent.ready();
    silent.frame([1, 1, 'csharp']);
    const seen = await run('heartbeat', {
      endpoint: `tcp://127.0.0.1:${gw.port}`,
      token: 'csharp',
      idle: '2000',
    });
    await waitFor(() => silent.closeFrame() !== undefined, 5000, 'the silent peer closed');
    expect(silent.closeFrame()?.[1]).toBe(1008);

    const idle = seen.idle as Record<string, number | null>;
    expect(idle.closedMeanwhile).toBeNull();
    expect(idle.pingsSent).toBeGreaterThanOrEqual(3);
    expect(idle.pongsReceived).toBeGreaterThanOrEqual(1);
    expect(seen.afterIdle).toEqual({ echo: 'still here', sameSession: true });
  });

  it("fails a waiting request when the server closes the session, and reports the server's reason", async () => {
    const gw = await gateway();
    const seen = await run('serverClose', { endpoint: `tcp://127.0.0.1:${gw.port}`, token: 'csharp' });
    const goingAway = {
      by: 'Server',
      code: 1001,
      reason: 'goingAway',
      detail: 'server restarts',
      mayReconnect: true,
    };
    expect(seen.pending).toMatchObject({ kind: 'Closed', closed: goingAway });
    expect(seen.closed).toEqual(goingAway);
    expect(seen.afterClose).toEqual({ send: false, isOpen: false });
    expect(gw.closes).toEqual(['goingAway']);
  });

  // The client asks for resume (ZLinkSessionOptions.Resume) and reaches the gateway through a TCP proxy
  // the test cuts: a network that fails under the player (docs/sessions-wire.md#resume-after-a-drop).
  describe('resume after a drop', () => {
    async function proxyTo(port: number | undefined): Promise<RecordingProxy> {
      const proxy = cleanup.add(await RecordingProxy.start());
      proxy.target = port;
      return proxy;
    }

    const cases = [
      { title: 'over tcp', kind: 'tcp', resendBuffer: undefined },
      { title: 'over websocket', kind: 'websocket', resendBuffer: undefined },
      // A resend buffer of 1 byte: the Send is let go at once, and found lost at the resume.
      { title: 'over tcp, its Send past the resend buffer', kind: 'tcp', resendBuffer: 1 },
    ] as const;
    it.each(cases)(
      '$title: the same session comes back; its request in flight is answered once, what the server never got is sent again and runs once, and the pushes made while away arrive in order',
      async ({ kind, resendBuffer }) => {
        const proxy = await proxyTo(undefined);
        const release = cleanup.gate();
        let held: ZLinkSession | undefined;
        let holds = 0;
        const gw = await gateway(kinds[kind].listener, {
          // The request in flight: from here on what the client sends is lost in the network; the
          // client hears "holding" and then writes a Request and a Send the server will never get.
          hold: {
            fn: async (_payload, ctx) => {
              holds++;
              held = session(ctx);
              proxy.discardFromClient = true;
              held.push('holding', 1);
              await release.promise;
              return 'held';
            },
          },
          // Asked by the runner's second session (straight to the gateway) once it wrote both: the
          // connection drops; while the client is away, a push and the hold's answer are made.
          cut: {
            fn: async () => {
              proxy.cut();
              proxy.target = undefined;
              await waitFor(() => held?.connected === false, 5000, 'the gateway seeing the drop');
              held?.push('whileAway', 2);
              release.open();
              // The client's first try found no way through (its Hello never reached the gateway):
              // the same token must still be good for the next.
              await waitFor(() => proxy.refused > 0, 5000, 'a resume the network refused');
              await new Promise((resolve) => setImmediate(resolve));
              proxy.discardFromClient = false;
              proxy.target = gw.port;
              return 'cut';
            },
          },
        });
        proxy.target = gw.port;
        const seen = await run('resume', {
          endpoint: kinds[kind].endpoint(proxy.port),
          control: kinds[kind].endpoint(gw.port),
          token: 'csharp',
          ...(resendBuffer === undefined ? {} : { resendBuffer: String(resendBuffer) }),
        });
        const kept = resendBuffer === undefined;

        const resume = seen.resume as Record<string, unknown>;
        const ids = resume.sessionIds as string[];
        expect(new Set(ids).size).toBe(1);
        expect(resume).toEqual({
          welcome: { resumable: true, resumeGraceMs: 30000 },
          // In the order the server made them, each once, the resume between the drop and what was
          // kept for the client.
          events: [
            'push holding 1',
            'dropped',
            'resumed',
            'push whileAway 2',
            ...(kept ? ['push noted {"got":9}'] : []),
          ],
          held: 'held',
          lostEcho: 'lost',
          sent: true,
          sessionIds: ids,
          // The echo "lost" and the Send: above the resumed Welcome's count, sent again (the Send only
          // if the client still held it).
          resent: kept ? 2 : 1,
          sendsLost: kept ? 0 : 1,
          attempts: expect.any(Number),
          connected: true,
        });
        expect(resume.attempts).toBeGreaterThanOrEqual(2);
        // Each ran once: the hold before the drop, the two lost frames after the resume.
        expect(holds).toBe(1);
        expect(gw.received).toEqual(['before', 'lost', 'after']);
        expect(gw.notes).toEqual(kept ? [9] : []);
        expect(gw.drops).toEqual(['lost']);
        expect(gw.resumes).toEqual([ids[0]]);
        expect(seen.closed).toMatchObject({ by: 'Client', code: 1000, reason: 'normal' });
        await waitFor(() => gw.closes.length === 2, 5000, 'the gateway hearing both sessions close');
        expect(gw.closes).toEqual(['normal', 'normal']);
      },
    );

    it('acknowledges what it receives, so the gateway forgets it: a stream past maxPendingBytes keeps the session open', async () => {
      // 24 answers of 4 pushes of 4 KiB: 384 KiB kept on the gateway unless the client's Acks count them,
      // against a maxPendingBytes of 64 KiB.
      const gw = await gateway(
        { maxPendingBytes: 65536 },
        {
          chunk: {
            fn: (payload, ctx) => {
              for (let i = 0; i < 4; i++) session(ctx).push('chunk', 'x'.repeat(4096));
              return payload;
            },
          },
        },
      );
      const seen = await run('acks', {
        endpoint: kinds.tcp.endpoint(gw.port),
        token: 'csharp',
        chunks: '24',
      });
      expect(seen.acks).toEqual({
        answers: 24,
        pushes: 96,
        connected: true,
        closed: expect.objectContaining({ by: 'Client', reason: 'normal' }),
      });
      await waitFor(() => gw.closes.length === 1, 5000, 'the gateway hearing the close');
      expect(gw.closes).toEqual(['normal']);
    });

    /**
     * What the `lostForGood` run reports when its session ended as `closed`: the request in flight
     * failed with it, "dropped" came first when the session was resumable, and a new session opened.
     */
    const endedAs = (resumable: boolean, closed: Record<string, unknown>) => {
      const ended = { ...closed, mayReconnect: true };
      return {
        resumable,
        request: expect.objectContaining({ kind: 'Closed', closed: ended }),
        closed: ended,
        events: resumable ? ['dropped'] : [],
        afterClose: { send: false, isOpen: false },
        newSession: { other: true, echo: 'new session' },
      };
    };

    /** The handler that drops its own session's connection (and keeps new ones out with `refuse`). */
    const away = (proxy: RecordingProxy, refuse: boolean, then?: () => Promise<void>) => ({
      away: {
        fn: () => {
          proxy.cut();
          if (refuse) proxy.target = undefined;
          void then?.();
          return 'never seen';
        },
      },
    });

    it('ends the session resumeExpired when it cannot come back within the grace', async () => {
      const proxy = await proxyTo(undefined);
      const gw = await gateway({ resumeGraceMs: 1500 }, away(proxy, true));
      proxy.target = gw.port;
      const seen = await run('lostForGood', {
        endpoint: kinds.tcp.endpoint(proxy.port),
        fresh: kinds.tcp.endpoint(gw.port),
        token: 'csharp',
      });
      expect(seen.lostForGood).toEqual(
        endedAs(true, {
          by: 'Connection',
          code: null,
          reason: 'resumeExpired',
          detail: expect.stringContaining('1500 ms'),
        }),
      );
      await waitFor(() => gw.closes.includes('resumeExpired'), 5000, 'the gateway expiring the session');
      expect(gw.drops).toEqual(['lost']);
      expect(gw.resumes).toEqual([]);
    });

    it('ends the session resumeRefused when the gateway no longer has it (a restart), and a new session opens', async () => {
      const proxy = await proxyTo(undefined);
      let second: Gateway | undefined;
      const first: Gateway = await gateway(
        {},
        away(proxy, true, async () => {
          await first.runtime.close();
          second = await gateway();
          proxy.target = second.port;
        }),
      );
      proxy.target = first.port;
      const seen = await run('lostForGood', { endpoint: kinds.tcp.endpoint(proxy.port), token: 'csharp' });
      // The new session is on the new gateway, behind the same endpoint.
      expect(seen.lostForGood).toEqual(
        endedAs(true, { by: 'Server', code: 1014, reason: 'resumeRefused', detail: expect.any(String) }),
      );
      const listener = second?.runtime.snapshot().sessions?.find((s) => s.listener === 'game');
      expect(listener?.resumesRefused).toBe(1);
      expect(second?.received).toEqual(['new session']);
    });

    it('treats a drop as the end of the session when the server offers no resume (resumeGraceMs 0)', async () => {
      const proxy = await proxyTo(undefined);
      const gw = await gateway({ resumeGraceMs: 0 }, away(proxy, false));
      proxy.target = gw.port;
      const seen = await run('lostForGood', { endpoint: kinds.tcp.endpoint(proxy.port), token: 'csharp' });
      expect(seen.lostForGood).toEqual(
        endedAs(false, { by: 'Connection', code: null, reason: 'lost', detail: expect.any(String) }),
      );
      expect(gw.drops).toEqual([]);
    });
  });

  it("compiles docs/sessions.md's C# example and the client README's against the client", () => {
    const csharpBlocks = (markdown: string): string[] =>
      [...markdown.matchAll(/^```csharp\n([\s\S]*?)^```/gm)].map((m) => m[1] as string);
    const docs = csharpBlocks(sectionOf(read('docs/sessions.md'), 'Clients'));
    const readme = csharpBlocks(read(join(CLIENT_DIR, 'README.md')));
    expect([docs.length, readme.length]).toEqual([1, 1]);
    // The docs' example is a whole Unity script; the README's, statements in an async method.
    const sources = [
      ...docs,
      ...readme.map(
        (block, i) =>
          'using System.Collections.Generic;\nusing System.Threading.Tasks;\nusing ZLink.Session;\n' +
          `public static class ReadmeExample${i} {\n  public static async Task Run() {\n${block}  }\n}\n`,
      ),
      // The few UnityEngine members the script uses, stubbed, stand in for Unity.
      'namespace UnityEngine {\n' +
        '  public class Object {}\n' +
        '  public class Component : Object {}\n' +
        '  public class Behaviour : Component {}\n' +
        '  public class MonoBehaviour : Behaviour {}\n' +
        '  public static class Debug {\n' +
        '    public static void Log(object message) {}\n' +
        '    public static void LogWarning(object message) {}\n' +
        '  }\n' +
        '}\n',
    ];
    const files = sources.map((source, i) => {
      const file = join(buildDir, `example-${i}.cs`);
      writeFileSync(file, source);
      return file;
    });
    // A fragment may leave a variable unused (CS0219); every other warning still fails.
    compile(
      join(buildDir, 'examples.dll'),
      [...clientSources(), ...files],
      ['-target:library', '-nowarn:219'],
    );
  });
});
