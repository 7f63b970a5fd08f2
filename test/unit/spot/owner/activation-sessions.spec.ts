import { describe, expect, it } from '@jest/globals';
import { RecordKind, decodeFrame } from '../../../../lib/core/index.js';
import {
  type ActorBinding,
  type BindingPusher,
  ObjectSessions,
} from '../../../../lib/spot/owner/activation-sessions.js';
import {
  decodeObjectRecord,
  encodeSessionBindingEnded,
  encodeSessionPush,
} from '../../../../lib/spot/wire/index.js';

/**
 * An Actor's bound sessions (docs/sessions.md#when-a-binding-ends): a binding's end is a record of its
 * own, never a Push, so no packet an Actor pushes can end a binding or reach a client as one.
 */

const BINDING: ActorBinding = {
  ownerRid: 'gateway',
  ownerGeneration: 'gg1',
  listener: 'game',
  sessionId: 's.1',
  bindingGeneration: 3,
};

/** What the Actor's owner sent its Session owners, in order. */
function recording(): { sent: string[]; pusher: BindingPusher } {
  const sent: string[] = [];
  return {
    sent,
    pusher: {
      push: (b, actorId, packet) => (sent.push(`push ${actorId} ${b.sessionId} ${packet}`), true),
      ended: (b, actorId) => (sent.push(`ended ${actorId} ${b.sessionId}`), true),
    },
  };
}

describe("an Actor's ctx.push", () => {
  it("refuses a packet under the runtime's zlink: prefix, bound or not, naming it", () => {
    const { sent, pusher } = recording();
    const sessions = new ObjectSessions('cid', pusher);
    const thrown = (packet: string): unknown => {
      try {
        sessions.push(packet, null);
      } catch (error) {
        return error;
      }
      return 'no error';
    };
    const refused = { code: 'InvalidArgument', message: expect.stringContaining("'zlink:binding-ended'") };
    expect(thrown('zlink:binding-ended')).toMatchObject(refused);
    sessions.bind(BINDING);
    expect(thrown('zlink:binding-ended')).toMatchObject(refused);
    expect(thrown('')).toMatchObject({ code: 'InvalidArgument' });
    expect(sent).toEqual([]);
    expect(sessions.push('moved', { x: 1 })).toBe(1);
    expect(sent).toEqual(['push cid s.1 moved']);
  });

  it('a destroy tells each binding its end as its own record, behind the pushes', () => {
    const { sent, pusher } = recording();
    const sessions = new ObjectSessions('cid', pusher);
    sessions.bind(BINDING);
    sessions.push('moved', 1);
    sessions.endAll();
    expect(sent).toEqual(['push cid s.1 moved', 'ended cid s.1']);
    expect(sessions.size).toBe(0);
  });
});

describe('SessionBindingEnded (record 48)', () => {
  const bytes = encodeSessionBindingEnded({
    listener: 'game',
    sessionId: 's.1',
    bindingGeneration: 3,
    actorId: 'cid',
  });

  it('is read by a Session owner that knows it', () => {
    expect(decodeObjectRecord(bytes)).toEqual({
      kind: RecordKind.SessionBindingEnded,
      listener: 'game',
      sessionId: 's.1',
      bindingGeneration: 3,
      actorId: 'cid',
    });
    expect(decodeFrame(bytes, true).objects?.map((o) => o.kind)).toEqual([RecordKind.SessionBindingEnded]);
  });

  it('is dropped, counted as malformed, by a node that does not read it: never a channel record or a Push', () => {
    const frame = decodeFrame(bytes, false);
    expect(frame.records).toEqual([]);
    expect(frame.malformed).toHaveLength(1);
  });
});

describe('SessionPush (record 46)', () => {
  it("is never read with a runtime packet: a peer's zlink: push reaches no client", () => {
    const push = (packet: string): unknown =>
      decodeObjectRecord(
        encodeSessionPush({
          listener: 'game',
          sessionId: 's.1',
          bindingGeneration: 3,
          actorId: 'cid',
          packet,
          payload: Uint8Array.of(0xc0),
        }),
      );
    expect(push('zlink:binding-ended')).toBe("session push of the runtime's packet 'zlink:binding-ended'");
    expect(push('moved')).toMatchObject({ kind: RecordKind.SessionPush, packet: 'moved' });
  });
});
