/**
 * Record kinds reserved for the object layer (issue 15; docs/protocol.md#object-records): a node of this version
 * reads none of them, so a newer peer's object message is dropped and counted on the real socket,
 * never handed to a channel or Node direct handler, and the node keeps serving.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  RESERVED_KINDS,
  RecordKind,
  WIRE_VERSION,
  encodeMeshRequest,
  encodeMeshRoutedRequest,
  encodePayload,
} from '../../../lib/core/index.js';
import { Cleanup, EventCollector, waitFor } from '../../helpers/index.js';
import { FakePeer, endpointOf, fakeState, startNode } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

describe('reserved record kinds', () => {
  it('from a ready peer, each is dropped as a protocol_error naming it; no handler runs, no reply goes back', async () => {
    const ran: string[] = [];
    const node = await startNode(cleanup, {
      rid: 'node-a',
      channels: { match: { role: 'server' } },
      handlers: [['match', 'request', 'who', () => ran.push('channel') && 'node-a'] as const],
      nodeHandlers: [['request', 'whoami', () => ran.push('node') && 'node-a'] as const],
    });
    const events = new EventCollector(node.events);
    const peer = cleanup.add(new FakePeer(fakeState('newer-node', { objectRole: 'server' })));
    await peer.connect(endpointOf(node));
    await node.waitForPeers('game', 1);

    const payload = encodePayload('hi');
    const before = node.events.count('protocol_error');
    // Shaped like the calls they may become: a correlation, a channel and packet a handler serves.
    for (const kind of RESERVED_KINDS.keys()) {
      await peer.send(encodePayload([WIRE_VERSION, kind, 5, 'match', 'who', null, payload]));
    }
    await peer.send(encodeMeshRoutedRequest(6, 'newer-node', 'match', 'who', undefined, payload));
    const sent = RESERVED_KINDS.size + 1;
    await waitFor(() => node.events.count('protocol_error') >= before + sent, 5000, 'every record counted');

    const reasons = events.of('protocol_error').map((e) => e.reason);
    for (const name of RESERVED_KINDS.values()) expect(reasons.join('\n')).toContain(`(${name}) is reserved`);
    expect(reasons.join('\n')).toContain(`record kind ${RecordKind.MeshRoutedRequest}`);
    expect(ran).toEqual([]);
    expect(node.events.count('delivery')).toBe(0);

    // Still serving that peer: a plain MeshRequest after them is answered.
    await peer.send(encodeMeshRequest(7, undefined, 'whoami', undefined, payload));
    await waitFor(() => peer.received.some((r) => r.kind === RecordKind.Reply), 5000, 'the reply');
    expect(
      peer.received.filter((r) => r.kind === RecordKind.Reply || r.kind === RecordKind.ErrorReply),
    ).toEqual([expect.objectContaining({ kind: RecordKind.Reply, correlation: 7 })]);
    expect(ran).toEqual(['node']);
    expect(node.events.count('protocol_error')).toBe(before + sent);
  });
});
