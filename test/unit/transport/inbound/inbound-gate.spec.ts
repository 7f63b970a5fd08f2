import { describe, expect, it } from '@jest/globals';
import {
  DRAINING_CODE,
  FENCED_CODE,
  JobQueue,
  RecordKind,
  type ZLinkMessageContext,
  ZLinkEvents,
  decodeFrame,
} from '../../../../lib/core/index.js';
import { type InboundScope, channelScope } from '../../../../lib/transport/inbound/inbound.js';
import { InboundGate, type InboundGateConfig } from '../../../../lib/transport/inbound/inbound-gate.js';
import { ChannelHandlerRegistry } from '../../../../lib/core/index.js';

/** The one inbound gate: its refusals and its permit rule, against a real JobQueue and handler scope. */

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

interface Harness {
  readonly gate: InboundGate;
  readonly jobs: JobQueue;
  readonly scope: InboundScope<ZLinkMessageContext>;
  readonly ran: number[];
  readonly replies: { code?: string; message?: string; ok?: boolean }[];
  /** Resolves the handler run of message `n`. */
  finish(n: number): void;
}

function harness(config: Omit<InboundGateConfig, 'jobs'>, limit = 1): Harness {
  const jobs = new JobQueue(limit);
  const handlers = new ChannelHandlerRegistry();
  const ran: number[] = [];
  const pending = new Map<number, () => void>();
  handlers.register({
    channel: 'billing',
    kind: 'request',
    packet: 'work',
    source: 'test.work',
    handler: (payload) => {
      const n = payload as number;
      ran.push(n);
      return new Promise<void>((resolve) => pending.set(n, resolve));
    },
  });
  const replies: Harness['replies'] = [];
  const reply = (_source: Buffer, record: Uint8Array): void => {
    for (const r of decodeFrame(Buffer.from(record)).records) {
      if (r.kind === RecordKind.ErrorReply) replies.push({ code: r.error.code, message: r.error.message });
      else replies.push({ ok: true });
    }
  };
  const scope = channelScope('client-server', new ZLinkEvents(), 'billing', undefined, handlers, reply);
  return {
    gate: new InboundGate({ jobs, ...config }),
    jobs,
    scope,
    ran,
    replies,
    finish: (n) => pending.get(n)?.(),
  };
}

/** A msgpack-encoded small positive integer payload (fixint). */
const request = (n: number) => ({ packet: 'work', metadata: undefined, payload: Uint8Array.of(n) });
const source = Buffer.from('client');

const listenerRules = {
  who: "server of 'billing'",
  drainNamesChannel: false,
  precedence: 'draining',
} as const;
const nodeRules = { who: "node 'node-a'", drainNamesChannel: true, precedence: 'fenced' } as const;

describe('InboundGate refusals', () => {
  const fencedBy = (who: string) => `${who} is fenced: its owner lease was not refreshed in time`;
  it.each([
    // The listener says draining while both hold; the node says fenced.
    ['a ClientServer listener', listenerRules, 'fenced', "server of 'billing' is draining", DRAINING_CODE],
    ['a MeshNode', nodeRules, 'draining', fencedBy("node 'node-a'"), FENCED_CODE],
  ] as const)(
    '%s refuses with its own codes and messages; precedence decides when both hold',
    (_title, refusals, first, both, bothCode) => {
      const h = harness({ refusals, backlog: 0, recheck: false });
      h.gate[first] = true;
      h.gate.deliver(h.scope, source, 1, request(1), true);
      h.gate.draining = true;
      h.gate.fenced = true;
      h.gate.deliver(h.scope, source, 2, request(2), true);
      const alone =
        first === 'fenced'
          ? { code: FENCED_CODE, message: fencedBy(refusals.who) }
          : { code: DRAINING_CODE, message: "node 'node-a' is draining 'billing'" };
      expect(h.replies).toEqual([alone, { code: bothCode, message: both }]);
      expect(h.ran).toEqual([]);
    },
  );

  it('a drain spares records it does not apply to (Node direct); a fence stops them too', () => {
    const node = harness({ refusals: nodeRules, backlog: 10, recheck: false });
    node.gate.draining = true;
    expect(node.gate.refusal(false)).toBeUndefined();
    expect(node.gate.refusal(true)).toBe('draining');
    node.gate.fenced = true;
    expect(node.gate.refusal(false)).toBe('fenced');
  });

  it('without refusal rules nothing is ever refused', () => {
    const link = harness({ backlog: 0, recheck: false });
    link.gate.draining = true;
    link.gate.fenced = true;
    expect(link.gate.refusal(true)).toBeUndefined();
  });
});

describe('InboundGate permits', () => {
  it('backlog 0: the loop is behind at the first wait, and caughtUp() resolves once that record ran', async () => {
    const h = harness({ refusals: listenerRules, backlog: 0, recheck: true });
    h.gate.deliver(h.scope, source, 1, request(1), true);
    expect(h.gate.behind).toBe(false);
    h.gate.deliver(h.scope, source, 2, request(2), true);
    expect(h.gate.behind).toBe(true);
    const caughtUp = h.gate.caughtUp();
    h.finish(1);
    await caughtUp;
    expect(h.ran).toEqual([1, 2]);
    expect(h.gate.behind).toBe(false);
    expect(h.gate.inFlight).toBe(1);
    h.finish(2);
    await flush();
    expect(h.gate.inFlight).toBe(0);
    expect(h.jobs.active).toBe(0);
  });

  it('a bounded backlog reads on until more records wait than it allows; they run in arrival order', async () => {
    const h = harness({ refusals: nodeRules, backlog: 2, recheck: false });
    for (let n = 1; n <= 3; n++) h.gate.deliver(h.scope, source, n, request(n), true);
    expect(h.gate.behind).toBe(false);
    h.gate.deliver(h.scope, source, 4, request(4), true);
    expect(h.gate.behind).toBe(true);
    for (let n = 1; n <= 4; n++) {
      h.finish(n);
      await flush();
    }
    await h.gate.caughtUp();
    expect(h.ran).toEqual([1, 2, 3, 4]);
  });

  it.each([
    ['recheck: refused, its permit handed back', listenerRules, true, [1]],
    ['no recheck: run all the same', nodeRules, false, [1, 2]],
  ] as const)(
    'a record that waited while the receiver began draining: %s',
    async (_title, refusals, recheck, ran) => {
      const h = harness({ refusals, backlog: recheck ? 0 : 10, recheck });
      h.gate.deliver(h.scope, source, 1, request(1), true);
      h.gate.deliver(h.scope, source, 2, request(2), true);
      h.gate.draining = true;
      h.finish(1);
      await h.gate.caughtUp();
      await flush();
      expect(h.ran).toEqual(ran);
      if (recheck) {
        expect(h.replies).toEqual([
          { ok: true },
          { code: DRAINING_CODE, message: "server of 'billing' is draining" },
        ]);
        expect(h.jobs.active).toBe(0);
      }
    },
  );

  it('the signal ends every wait: the waiting record never runs and no permit is lost', async () => {
    const closing = new AbortController();
    const h = harness({ refusals: listenerRules, backlog: 0, recheck: true, signal: closing.signal });
    h.gate.deliver(h.scope, source, 1, request(1), true);
    h.gate.deliver(h.scope, source, 2, request(2), true);
    closing.abort();
    await h.gate.caughtUp();
    expect(h.gate.behind).toBe(false);
    h.finish(1);
    await flush();
    expect(h.ran).toEqual([1]);
    expect(h.jobs.active).toBe(0);
  });

  it('drain() resolves completed once handlers are done and no refused record came for the quiet period', async () => {
    const h = harness({ refusals: listenerRules, backlog: 0, recheck: true });
    h.gate.deliver(h.scope, source, 1, request(1), true);
    const drained = h.gate.drain(5000, () => false);
    h.gate.deliver(h.scope, source, 2, request(2), true);
    expect(h.replies).toEqual([{ code: DRAINING_CODE, message: "server of 'billing' is draining" }]);
    h.finish(1);
    await expect(drained).resolves.toBe('completed');
  });

  it("drain() at its deadline with a handler still running is 'deadline'", async () => {
    const h = harness({ refusals: listenerRules, backlog: 0, recheck: true });
    h.gate.deliver(h.scope, source, 1, request(1), true);
    await expect(h.gate.drain(30, () => false)).resolves.toBe('deadline');
    h.finish(1);
  });
});
