import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the sessions bench's processes share (bench/sessions.ts). */
export const BENCH_PLAYER_TYPE = 'bench-player';
export const BENCH_SESSIONS_LISTENER = 'bench-players';

/**
 * The session listener kinds measured side by side (`sessions.<name>.listen[].kind`): one column each
 * in the table. The ZeroMQ STREAM listener they were measured against is gone (docs/decisions.md).
 */
export const BENCH_SESSION_KINDS = ['tcp', 'tls', 'websocket'] as const;
export type BenchSessionKind = (typeof BENCH_SESSION_KINDS)[number];

/** The gateway's listener of `kind`: one per kind, same handlers. */
export function benchListener(kind: BenchSessionKind): string {
  return `${BENCH_SESSIONS_LISTENER}-${kind}`;
}

/** The packet the gateway pushes to a resumable session as it drops (the held push a resume waits for). */
export const HELD_PUSH_PACKET = 'held';

/** The test server certificate's key type: RSA 2048 (the default) or ECDSA P-256. */
export type BenchCert = 'rsa' | 'ecdsa';

/**
 * The test certificate the `tls` listener serves and the CA its clients check it with
 * (test/fixtures/tls: test-only keys for localhost and 127.0.0.1, both certificates signed by that CA),
 * read from the checkout the bench runs in, found upwards from the compiled file.
 */
export function benchTls(cert: BenchCert = 'rsa'): { key: string; cert: string; ca: string } {
  let dir = dirname(fileURLToPath(import.meta.url));
  const server = cert === 'ecdsa' ? 'ecdsa-server' : 'server';
  for (;;) {
    const tls = join(dir, 'test', 'fixtures', 'tls');
    if (existsSync(join(tls, `${server}.key`))) {
      const read = (file: string): string => readFileSync(join(tls, file), 'utf8');
      return { key: read(`${server}.key`), cert: read(`${server}.crt`), ca: read('ca.crt') };
    }
    const up = dirname(dir);
    if (up === dir) throw new Error('test/fixtures/tls not found above the bench build');
    dir = up;
  }
}

/** Runner → gateway: requests straight to the Actor (`toActor`), `depth` outstanding. */
export interface DirectCommand {
  readonly type: 'direct';
  readonly actor: string;
  readonly durationMs: number;
  readonly depth: number;
}

/** Runner → client: a session bound to `actor`, then pipelined requests or one-way sends through it. */
export interface RelayCommand {
  readonly type: 'relay';
  /** The listener's endpoint (its kind's URL). */
  readonly url: string;
  readonly actor: string;
  readonly durationMs: number;
  readonly depth: number;
  readonly oneway: boolean;
  /** Exactly this many requests instead of `durationMs` (`oneway` false only). */
  readonly requests?: number;
  /** Keep the session for the next command on the same endpoint and Actor (no connect, no login then). */
  readonly keep?: boolean;
}

/**
 * Runner → client: open `count` sessions, `concurrency` of them connecting at once (connect, TLS or
 * upgrade, Hello, Welcome), then close them all; the rate is sessions welcomed per second.
 */
export interface AcceptCommand {
  readonly type: 'accept';
  readonly url: string;
  readonly count: number;
  readonly concurrency: number;
}

/** Runner → client: open `count` idle sessions (welcomed, bound to nothing) and keep them. */
export interface IdleCommand {
  readonly type: 'idle';
  readonly url: string;
  readonly count: number;
  /** Local addresses to connect from, in turn (127.0.0.x: each has its own ephemeral ports). */
  readonly sources: readonly string[];
  /** Sessions opening at once (default 256: a burst); 1 with `gapMs` is players arriving one by one. */
  readonly concurrency?: number;
  /** A pause after each session opened, in each of the `concurrency` lanes (default none). */
  readonly gapMs?: number;
}

/**
 * Runner → client: `tries` times, a resumable session that drops its connection, stays away `awayMs`
 * (the gateway pushes to it as it sees the drop: a push held for it), then resumes on a new connection;
 * each try's time from the new connection's start to that push's arrival.
 */
export interface ResumeCommand {
  readonly type: 'resume';
  readonly url: string;
  readonly tries: number;
  readonly awayMs: number;
}

export interface ThroughputResult {
  readonly perSec: number;
  readonly count: number;
  readonly failed: number;
}
