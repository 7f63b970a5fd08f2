import { afterEach, describe, expect, it } from '@jest/globals';
import {
  type NodeRun,
  RecordKind,
  type WireError,
  decodePayload,
  encodePayload,
} from '../../../../lib/core/index.js';
import { type RelocationImage, decodeObjectRecord } from '../../../../lib/spot/wire/index.js';
import type { InboundObjectCall, ObjectAnswer } from '../../../../lib/spot/owner/object-dispatch.js';
import { ObjectHost } from '../../../../lib/spot/owner/object-host.js';
import { captureActivation } from '../../../../lib/spot/relocation/index.js';
import { callRecord } from '../../../../lib/spot/relocation/capture.js';
import { inboundCall } from '../../../../lib/spot/owner/inbound-call.js';
import { objectClass, registry } from '../../../integration/spot/harness.js';
import { objectHost } from '../fixtures.js';

/**
 * The seal and capture of a move's source (docs/protocol.md#relocation-steps): after the running turn, the
 * object's state, the calls waiting (with their reply routes) and its timers are read into one image;
 * nothing is taken away, so unsealing (an aborted move) runs the waiting calls as if nothing happened.
 */

const SELF: NodeRun = { rid: 'node-a', nodeGeneration: 'ga1' };
const CALLER: NodeRun = { rid: 'caller', nodeGeneration: 'gc1' };

let release: () => void = () => undefined;
let failCapture = false;

class Counter {
  n = 0;
  bump(_: unknown, ctx: { timers: { setInterval(cb: () => void, ms: number, label?: string): unknown } }) {
    this.n += 1;
    if (this.n === 1) ctx.timers.setInterval(() => undefined, 60_000, 'tick');
    return this.n;
  }
  slow(): Promise<string> {
    return new Promise((resolve) => {
      release = () => resolve('slow done');
    });
  }
  capture(): { n: number } {
    if (failCapture) throw new Error('cannot capture');
    return { n: this.n };
  }
}

async function setup() {
  const host = objectHost(SELF, registry(objectClass('spot', 'counter', Counter, ['bump', 'slow'])));
  await host.activate('spot', 'counter', 'x', 'create', undefined, 5000);
  const a = host.get('spot', 'x');
  if (!a) throw new Error('not activated');
  const fences = { owner: SELF, ...a.authority };
  const answers: { correlation: number | undefined; ok?: unknown; error?: WireError }[] = [];
  const call = (packet: string, correlation?: number): void => {
    const inbound: InboundObjectCall = {
      messageKind: correlation === undefined ? 'send' : 'request',
      objectKind: 'spot',
      id: 'x',
      fences,
      operationId: `op-${packet}-${correlation ?? 's'}`,
      packet,
      metadata: undefined,
      payload: encodePayload(null),
      trace: undefined,
      correlation,
      origin: correlation === undefined ? undefined : CALLER,
      sourceRid: CALLER.rid,
      hops: 0,
    };
    const answer: ObjectAnswer = {
      ok: (value) => answers.push({ correlation, ok: value }),
      error: (error) => answers.push({ correlation, error }),
    };
    host.dispatch(inbound, answer);
  };
  return { host, a, call, answers };
}

const hosts: ObjectHost[] = [];
// The objects' timers (an interval) must not outlive a failed test.
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});

describe('captureActivation', () => {
  it('waits for the running turn, then reads state, the waiting calls with their reply routes, and the timers', async () => {
    const { host, a, call, answers } = await setup();
    hosts.push(host);
    call('bump', 1); // sets the 'tick' interval
    call('slow', 2); // holds the turn
    call('bump', 3);
    call('bump'); // a send
    let captured = false;
    const image = captureActivation(a, SELF).then((img) => {
      captured = true;
      return img;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(captured).toBe(false); // the running turn first
    release();
    const img = (await image) as RelocationImage;
    expect(img).toMatchObject({
      objectKind: 'spot',
      id: 'x',
      type: 'counter',
      objectGeneration: a.authority.objectGeneration,
      source: { owner: SELF, authorityOwnerGeneration: a.authority.authorityOwnerGeneration },
    });
    const state = decodePayload(img.state as Uint8Array);
    expect(state.ok && state.value).toEqual({ n: 1 });
    expect(img.queued.map((q) => decodeObjectRecord(q))).toEqual([
      expect.objectContaining({
        kind: RecordKind.ObjectRequest,
        correlation: 3,
        origin: CALLER,
        packet: 'bump',
      }),
      expect.objectContaining({ kind: RecordKind.ObjectSend, operationId: 'op-bump-s', packet: 'bump' }),
    ]);
    expect(img.timers).toEqual([
      { kind: 'interval', label: 'tick', dueInMs: expect.any(Number), intervalMs: 60_000 },
    ]);
    expect(answers).toEqual([
      { correlation: 1, ok: 1 },
      { correlation: 2, ok: 'slow done' },
    ]);

    // Sealed: a new call is refused, nothing waiting ran.
    call('bump', 4);
    expect(answers[2]).toMatchObject({ correlation: 4, error: { details: { reason: 'sealed' } } });
    // The move aborts: unsealing runs what waited, in order, and loses nothing.
    a.turns.unseal();
    await new Promise((r) => setTimeout(r, 20));
    expect(answers.slice(3)).toEqual([
      { correlation: 3, ok: 2 },
      { correlation: undefined, ok: 3 },
    ]);
    expect(a.instance).toMatchObject({ n: 3 });
  });

  it('a capture() that throws rejects the capture and leaves the object sealed for the abort to unseal', async () => {
    const { host, a } = await setup();
    hosts.push(host);
    failCapture = true;
    try {
      await expect(captureActivation(a, SELF)).rejects.toMatchObject({
        code: 'RemoteError',
        message: /capture\(\)/,
      });
      expect(a.turns.state).toBe('sealed');
      await expect(captureActivation(a, SELF)).rejects.toMatchObject({
        code: 'Unavailable',
        details: { reason: 'sealed' },
      });
      a.turns.unseal();
      expect(a.turns.state).toBe('open');
    } finally {
      failCapture = false;
    }
  });

  it('a call that came off the wire is carried as the record it came as; one made here is written', () => {
    const fences = { owner: SELF, objectGeneration: 1, authorityOwnerGeneration: 1, ownerLeaseGeneration: 1 };
    const made: InboundObjectCall = {
      messageKind: 'request',
      objectKind: 'spot',
      id: 'x',
      fences,
      operationId: 'op-1',
      packet: 'bump',
      metadata: undefined,
      payload: encodePayload({ n: 1 }),
      trace: undefined,
      correlation: 7,
      origin: CALLER,
      sourceRid: CALLER.rid,
      hops: 1,
    };
    const written = callRecord(made);
    const read = decodeObjectRecord(written);
    expect(read).toMatchObject({ kind: RecordKind.ObjectRequest, correlation: 7, origin: CALLER, hops: 1 });
    const link = { answer: () => true } as unknown as Parameters<typeof inboundCall>[2];
    const events = { emit: () => undefined } as unknown as Parameters<typeof inboundCall>[3];
    const { call } = inboundCall(read as never, CALLER.rid, link, events, 'mesh', written);
    // The same bytes, not a copy: a move relays what it held without writing each call again.
    expect(callRecord(call)).toBe(written);
  });
});
