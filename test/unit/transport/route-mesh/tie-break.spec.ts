/**
 * Which of two simultaneous ROUTER↔ROUTER links between the same pair survives (docs/protocol.md#mesh-join:
 * the one the smaller NodeRid initiated, by unsigned byte-wise compare of the NodeRids, a proper prefix sorts first), seen from both ends.
 */
import { describe, expect, it } from '@jest/globals';
import { initiatorWins } from '../../../../lib/transport/route-mesh/tie-break.js';

const id = (rid: string) => Buffer.from(rid, 'utf8');

describe('initiatorWins', () => {
  it.each([
    ['plain order', 'node-a', 'node-b'],
    ['a proper prefix sorts first', 'node', 'node-a'],
    ['the first differing byte decides, not the length', 'aa', 'b'],
    // Unsigned bytes: 'z' is 0x7a, 'é' is 0xc3 0xa9 in UTF-8 (a signed compare would order them the other way).
    ['unsigned bytes, not signed', 'z', 'é'],
    ['bytes, not UTF-16 code units', '\uffff', '😀'],
  ])('%s: the link the smaller NodeRid opened is kept, whichever end judges it', (_what, smaller, larger) => {
    // The smaller node judges its own outbound link (it initiated it) and the peer's (the peer did).
    expect(initiatorWins(id(smaller), id(larger))).toBe(true);
    expect(initiatorWins(id(larger), id(smaller))).toBe(false);
  });

  it('exactly one of the two links of an unequal pair wins, so both nodes keep the same one', () => {
    const rids = ['', 'a', 'a\u0000', 'ab', 'b', 'node-1', 'node-10', 'node-2', 'é', 'z'];
    for (const a of rids) {
      for (const b of rids) {
        if (a === b) continue;
        expect([a, b, initiatorWins(id(a), id(b)) !== initiatorWins(id(b), id(a))]).toEqual([a, b, true]);
      }
    }
  });

  it('equal NodeRids: neither new link replaces the current route', () => {
    expect(initiatorWins(id('node-a'), id('node-a'))).toBe(false);
  });
});
