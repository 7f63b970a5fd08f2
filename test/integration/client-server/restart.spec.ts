/**
 * Server restart at the same endpoint (docs/protocol.md#lifecycle-generations): only the new lifecycle generation becomes a ready
 * target, and nothing submitted to the old one reaches the new one.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Cleanup, EventCollector, outcome, waitFor, within } from '../../helpers/index.js';
import { LOCAL, candidates, startRuntime, waitForCandidates } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

describe('when the same server restarts, only the new lifecycle generation becomes a ready target and nothing submitted before reaches it', () => {
  it('requests submitted around the restart end once and never run on the new generation', async () => {
    const seenOld: unknown[] = [];
    const never = cleanup.gate();
    const old = await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen: { port: 0, bindHost: LOCAL }, rid: 'same' } } } },
      [
        [
          'request',
          'work',
          async (p) => {
            seenOld.push(p);
            await never.promise;
            return 'old';
          },
        ],
      ],
    );
    const endpoint = old.endpoint('billing') as string;
    const port = Number(/:(\d+)$/.exec(endpoint)?.[1]);
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [endpoint] } } },
    });
    const events = cleanup.add(new EventCollector(client.events));
    await waitForCandidates(client, 'billing', 1);

    const before = outcome(
      client.routeClient.requestToChannel('billing', 'work', 'before').async({ timeoutMs: 8000 }),
    );
    await waitFor(() => seenOld.length === 1, 5000, 'the first request at the old server');
    await old.close();
    // Submitted right after the old server went away, before the client noticed: selection is
    // synchronous at submit, so while the old connection is still a candidate they go to it.
    const submittedToOld = candidates(client, 'billing') === 1;
    const racing = Array.from({ length: 5 }, (_, i) =>
      outcome(
        client.routeClient.requestToChannel('billing', 'work', `racing-${i}`).async({ timeoutMs: 8000 }),
      ),
    );
    await events.next('server_lost', (e) => e.serverRid === 'same');

    const seenNew: unknown[] = [];
    const restarted = await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen: { port, bindHost: LOCAL }, rid: 'same' } } } },
      [
        [
          'request',
          'work',
          (p) => {
            seenNew.push(p);
            return 'new';
          },
        ],
      ],
    );
    expect(restarted.generation).not.toBe(old.generation);
    const ready = await events.next('server_ready', (e) => e.generation === restarted.generation, 8000);
    expect(ready.serverRid).toBe('same');

    const oldOnes = submittedToOld ? [before, ...racing] : [before];
    const results = await within(Promise.all(oldOnes), 10000, 'the old requests');
    for (const r of results)
      expect(r).toMatchObject({ ok: false, code: expect.stringMatching(/^(RouteError|Timeout)$/) });
    await within(Promise.all(racing), 10000, 'the racing requests');
    await expect(
      client.routeClient.requestToChannel('billing', 'work', 'after').async({ timeoutMs: 5000 }),
    ).resolves.toBe('new');
    await new Promise((r) => setTimeout(r, 200)); // room for a (wrong) delivery of an old request
    // Only a request submitted after the client saw the old server go may run on the new one.
    const mayRunOnNew = (p: unknown) => p === 'after' || (!submittedToOld && String(p).startsWith('racing'));
    expect(seenNew.filter((p) => !mayRunOnNew(p))).toEqual([]);
    expect(seenNew).toContain('after');
    const connections = client.snapshot().channels[0]?.client?.connections ?? [];
    expect(connections).toHaveLength(1);
    expect(connections[0]).toMatchObject({ ready: true, generation: restarted.generation });
  }, 30000);
});
