import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ZLinkSessionContext } from '../../lib/core/index.js';
import { howToInstall, pythons, pythonWithMsgpack } from '../../scripts/system-deps.mjs';
import { Cleanup } from '../helpers/index.js';
import { gatewayOptions, portOf, startGateway } from '../integration/sessions/harness.js';

/**
 * docs/sessions-wire.md claims a client in any language can be written from it alone. This runs one
 * that was: test/clients/session_client.py, Python with only msgpack, never shown the server's wire code
 * or the Node client. If the page and the server drift apart, this is the test that notices.
 */

const here = dirname(fileURLToPath(import.meta.url));
const script = join(here, '..', 'clients', 'session_client.py');
const RUN_TIMEOUT_MS = 20000;

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

/**
 * The interpreter to run the client with: the first of scripts/system-deps.mjs's that imports msgpack
 * (the same look `npm test`'s preflight takes; ZLINK_PYTHON picks one). A missing interpreter fails
 * rather than skips: a skipped proof of the page reads like a passing one.
 */
function python(): string {
  const found = pythonWithMsgpack();
  if (found) return found;
  throw new Error(
    `no python3 that can \`import msgpack\` (tried ${pythons().join(', ')}), which the Python session client needs.\n` +
      howToInstall(['python3-msgpack']),
  );
}

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the client to its end; a run past the bound is killed and fails, never left behind. */
function runClient(args: string[]): Promise<Run> {
  const child = spawn(python(), [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`python client still running after ${RUN_TIMEOUT_MS} ms; stderr: ${stderr}`));
    }, RUN_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The one JSON line a successful run prints; a failed run's stderr goes into the failure. */
function report(run: Run): Record<string, unknown> {
  if (run.code !== 0) {
    throw new Error(`python client exited ${run.code ?? run.signal}: ${run.stderr || '(no stderr)'}`);
  }
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]) as Record<string, unknown>;
}

async function gateway() {
  const runtime = await startGateway(gatewayOptions(), {
    handlers: {
      echo: {
        fn: (payload, ctx) => ({ echo: payload, sessionId: (ctx as ZLinkSessionContext).session.id }),
      },
      // What a handler can do with integers past 32 bits that came in msgpack's 64-bit forms.
      wide: {
        fn: (payload) => {
          const { ms, neg, huge } = payload as { ms: number; neg: number; huge: bigint };
          return {
            ms: typeof ms,
            later: ms + 1000,
            neg: typeof neg,
            huge: typeof huge,
            hugeText: String(huge),
          };
        },
      },
      note: {
        kind: 'send',
        fn: (payload, ctx) => {
          (ctx as ZLinkSessionContext).session.push('noted', { got: payload });
        },
      },
    },
    onOpen: (_session, hello) => hello.token === 'python',
  });
  return cleanup.add(runtime);
}

describe('a Python client written from docs/sessions-wire.md alone', () => {
  it('is welcomed, gets its reply, a NoHandler error, its push and a Pong, and closes cleanly', async () => {
    const runtime = await gateway();
    const seen = report(await runClient(['--port', String(portOf(runtime))]));

    const welcome = seen.welcome as Record<string, unknown>;
    expect(welcome).toEqual({
      version: 1,
      sessionId: expect.any(String),
      heartbeatMs: 10000,
      maxFrameBytes: 65536,
      maxInFlight: 64,
    });
    // The session id the client was given is the one its handler ran under: one connection, one session.
    expect(seen.echo).toEqual({
      echo: { hello: 'from python', n: [1, 2, 3] },
      sessionId: welcome.sessionId,
    });
    // Exact in a double: a number, whose arithmetic works; past 2^53: a BigInt, the value kept.
    expect(seen.wide).toEqual({
      ms: 'number',
      later: 1796256001000,
      neg: 'number',
      huge: 'bigint',
      hugeText: String(2n ** 60n),
    });
    expect(seen.nobodyCode).toBe('NoHandler');
    expect(seen.push).toEqual(['noted', { got: 7 }]);
    expect(seen.pong).toBe(true);
    expect(seen.closedCleanly).toBe(true);
  });

  it('is refused with close code 1006 when the application rejects its token', async () => {
    const runtime = await gateway();
    const seen = report(
      await runClient(['--port', String(portOf(runtime)), '--token', 'not-python', '--connect-only']),
    );
    expect(seen).toMatchObject({ welcome: null, closeCode: 1006 });
  });
});
