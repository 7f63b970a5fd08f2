import { describe, expect, it } from '@jest/globals';
import {
  type ChannelHandlerRegistration,
  ChannelHandlerRegistry,
  type MessageKind,
  ZLinkError,
} from '../../../../lib/core/index.js';

/** docs/protocol.md#handler-scopes-and-context: one handler per (ChannelName, kind, packet); a second declaration is a startup error naming both. */

function reg(channel: string, kind: MessageKind, packet: string, source: string): ChannelHandlerRegistration {
  return { channel, kind, packet, source, handler: () => source };
}

describe('ChannelHandlerRegistry', () => {
  it('a duplicate (channel, kind, packet) throws Configuration naming both sources', () => {
    const r = new ChannelHandlerRegistry();
    r.register(reg('billing', 'request', 'billing.charge', 'BillingHandlers.charge'));
    let thrown: unknown;
    try {
      r.register(reg('billing', 'request', 'billing.charge', 'LegacyBilling.charge'));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ZLinkError);
    expect((thrown as ZLinkError).code).toBe('Configuration');
    expect((thrown as ZLinkError).message).toContain('BillingHandlers.charge');
    expect((thrown as ZLinkError).message).toContain('LegacyBilling.charge');
    expect((thrown as ZLinkError).message).toContain('billing.charge');
    // The first registration stays in place.
    expect(r.lookup('billing', 'request', 'billing.charge')?.source).toBe('BillingHandlers.charge');
  });

  it('the same packet on different kinds or channels is fine and each finds its own handler', () => {
    const r = new ChannelHandlerRegistry();
    const all = [
      reg('billing', 'request', 'charge', 'A'),
      reg('billing', 'send', 'charge', 'B'),
      reg('audit', 'request', 'charge', 'C'),
      reg('audit', 'send', 'charge', 'D'),
    ];
    for (const x of all) r.register(x);
    for (const x of all) expect(r.lookup(x.channel, x.kind, x.packet)).toBe(x);
    expect(r.channels().sort()).toEqual(['audit', 'billing']);
    expect(
      r
        .forChannel('billing')
        .map((x) => x.source)
        .sort(),
    ).toEqual(['A', 'B']);
  });

  it('packet names that look like the internal key prefix do not collide', () => {
    const r = new ChannelHandlerRegistry();
    r.register(reg('c', 'request', 's:x', 'A'));
    r.register(reg('c', 'send', 'x', 'B'));
    r.register(reg('c', 'send', 'r:x', 'C'));
    r.register(reg('c', 'request', 'x', 'D'));
    expect(r.lookup('c', 'request', 's:x')?.source).toBe('A');
    expect(r.lookup('c', 'send', 'x')?.source).toBe('B');
    expect(r.lookup('c', 'send', 'r:x')?.source).toBe('C');
    expect(r.lookup('c', 'request', 'x')?.source).toBe('D');
  });

  it('lookups of unknown channel, kind or packet find nothing', () => {
    const r = new ChannelHandlerRegistry();
    r.register(reg('billing', 'request', 'charge', 'A'));
    expect(r.lookup('billing', 'send', 'charge')).toBeUndefined();
    expect(r.lookup('billing', 'request', 'refund')).toBeUndefined();
    expect(r.lookup('other', 'request', 'charge')).toBeUndefined();
    expect(r.forChannel('other')).toEqual([]);
  });
});
