import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { parseOptions } from '../../../bench/options.js';
import {
  type SessionsKindFigures,
  type SessionsSection,
  openFileLimit,
  sessionsMarkdown,
} from '../../../bench/sessions.js';

const dir = mkdtempSync(join(tmpdir(), 'zlink-bench-sessions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function limits(line: string): string {
  const file = join(dir, `limits-${Math.random().toString(36).slice(2)}`);
  writeFileSync(
    file,
    [
      'Limit                     Soft Limit           Hard Limit           Units     ',
      'Max processes             unlimited            unlimited            processes ',
      line,
      '',
    ].join('\n'),
  );
  return file;
}

const kind = (over: Partial<SessionsKindFigures> = {}): SessionsKindFigures => ({
  relayedReqPerSec: 35_000,
  onewayMsgPerSec: 150_000,
  acceptsPerSec: 2000,
  resumeMs: 1.5,
  resumeMaxMs: 3,
  resumes: 15,
  memory: [
    { count: 10_000, idleSessions: 10_000, rssPerSessionBytes: 5000, openPerSec: 3000 },
    {
      count: 50_000,
      idleSessions: 0,
      rssPerSessionBytes: 0,
      openPerSec: 0,
      skipped: 'not run: 50,000 sessions need 51000 open files in the gateway, the limit here is 20000',
    },
  ],
  ...over,
});

const section: SessionsSection = {
  store: 'private redis-server',
  depth: 32,
  reps: 3,
  acceptCount: 500,
  acceptConcurrency: 100,
  resumeAwayMs: 20,
  kinds: {
    tcp: kind(),
    tls: kind({ relayedReqPerSec: 20_000 }),
    websocket: kind({
      memory: [
        { count: 10_000, idleSessions: 10_000, rssPerSessionBytes: 9000, openPerSec: 900 },
        kind().memory[1]!,
      ],
    }),
  },
  directReqPerSec: 40_000,
  rawRelayedPerSec: 50_000,
  rawDirectPerSec: 100_000,
  failed: 0,
};

describe('bench sessions: a column per listener kind, the targets beside', () => {
  it('counts idle sessions per kind from --session-idle (10,000 unless told; 1,000 with --quick)', () => {
    expect(parseOptions([]).sessionIdle).toEqual([10_000]);
    expect(parseOptions(['--quick']).sessionIdle).toEqual([1000]);
    expect(parseOptions(['--session-idle', '10000,50000']).sessionIdle).toEqual([10_000, 50_000]);
    expect(() => parseOptions(['--session-idle', '10000,0'])).toThrow(
      '--session-idle needs a positive number',
    );
  });

  it('reads the hard open-file limit, which a count of idle sessions must fit under', () => {
    expect(
      openFileLimit(limits('Max open files            1024                 20000                files     ')),
    ).toBe(20_000);
    expect(
      openFileLimit(limits('Max open files            unlimited            unlimited            files     ')),
    ).toBe(Number.POSITIVE_INFINITY);
    expect(openFileLimit(join(dir, 'no-such-file'))).toBeUndefined();
  });

  it('renders every figure for tcp, tls and websocket, each against its target', () => {
    const md = sessionsMarkdown(section).join('\n');
    expect(md).toContain('| metric | tcp | tls | websocket | target |');
    expect(md).toContain(
      '| relayed ÷ direct `toActor` (40,000 req/s) | 0.88× (PASS) | 0.50× (FAIL) | 0.88× (PASS) | ≥ 0.70× |',
    );
    expect(md).toContain('| sessions accepted per second | 2,000 | 2,000 | 2,000 |');
    expect(md).toContain('| resume: new connection → held push, ms (median; slowest) | 1.50; 3.00 |');
    expect(md).toContain(
      '| gateway RSS per idle session at 10,000, bytes | 5,000 (PASS) | 5,000 (PASS) | 9,000 (FAIL) | ≤ 8,192 |',
    );
    expect(md).toContain('| gateway RSS per idle session at 50,000, bytes | not run | not run | not run |');
    expect(md).toContain('Memory not run: 50,000 sessions need 51000 open files');
    expect(md).toContain('| raw zeromq.js hop: relayed ÷ direct (the floor) | 0.50× |');
  });

  it('says so when the section failed', () => {
    expect(sessionsMarkdown({ error: 'boom\nstack' })).toEqual(['**Sessions failed**: boom', '']);
  });
});
