import { describe, expect, it } from '@jest/globals';
import type { NodeRun, WireError } from '../../../../lib/core/index.js';
import type { ObjectRouteFences } from '../../../../lib/spot/wire/index.js';
import type { InboundObjectCall } from '../../../../lib/spot/owner/object-call.js';
import { objectClass, registry } from '../../../integration/spot/harness.js';
import { inboundRequest, objectHost } from '../fixtures.js';

/**
 * A session's binding is to one incarnation (docs/sessions.md#when-a-binding-ends). The destroy tells
 * the Session owner, but a relay it sent before hearing it can still arrive after the Actor was created
 * again on the same route: the owner refuses it before any handler.
 */

const SELF: NodeRun = { rid: 'node-a', nodeGeneration: 'ga1' };

class Player {
  static turns = 0;
  move(): string {
    Player.turns++;
    return 'moved';
  }
}

/** A request relayed from a session over `fences` (the route its bind answered with). */
function relay(fences: ObjectRouteFences): InboundObjectCall {
  return {
    ...inboundRequest('p', fences, 'move'),
    objectKind: 'actor',
    session: {
      ownerRid: 'gateway',
      ownerGeneration: 'gg1',
      listener: 'game',
      sessionId: 's.1',
      bindingGeneration: 1,
      sequence: 1,
    },
  };
}

function answerOf(host: ReturnType<typeof objectHost>, call: InboundObjectCall): Promise<unknown> {
  return new Promise((resolve) =>
    host.dispatch(call, { ok: (value) => resolve(value), error: (error: WireError) => resolve(error) }),
  );
}

describe('a relay for a destroyed incarnation', () => {
  it('is refused bindingEnded by the incarnation created again on the same route, which runs no turn', async () => {
    const host = objectHost(SELF, registry(objectClass('actor', 'player', Player, ['move'])));
    const old = await host.activate('actor', 'player', 'p', 'create', undefined, 5000);
    const route = (): ObjectRouteFences => {
      const { objectGeneration, authorityOwnerGeneration, ownerLeaseGeneration } = host.get(
        'actor',
        'p',
      )!.authority;
      return { owner: SELF, objectGeneration, authorityOwnerGeneration, ownerLeaseGeneration };
    };
    const bound = route();
    expect(await answerOf(host, relay(bound))).toBe('moved');

    await host.destroy(old);
    const fresh = await host.activate('actor', 'player', 'p', 'create', undefined, 5000);
    // The new incarnation is held on the very route the binding stored, but for its generation.
    expect({ ...route(), objectGeneration: bound.objectGeneration }).toEqual(bound);

    Player.turns = 0;
    expect(await answerOf(host, relay(bound))).toMatchObject({
      code: 'ObjectClosed',
      message: expect.stringContaining("actor 'p' was destroyed and created again"),
      details: {
        reason: 'bindingEnded',
        actorId: 'p',
        objectGeneration: fresh.objectGeneration,
        boundGeneration: old.objectGeneration,
      },
    });
    expect(Player.turns).toBe(0);
    // Bound anew (the route of the new incarnation), it runs.
    expect(await answerOf(host, relay(route()))).toBe('moved');
    expect(Player.turns).toBe(1);
    await host.close();
  });
});
