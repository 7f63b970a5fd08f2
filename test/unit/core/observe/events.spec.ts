import { describe, expect, it } from '@jest/globals';
import { type ZLinkEvent, ZLinkEvents } from '../../../../lib/core/index.js';

/** Observability events (docs/protocol.md#what-observability-separates): one stream, counted per type and per delivery result. */

const delivery = (result: 'ok' | 'no_handler'): ZLinkEvent => ({
  type: 'delivery',
  result,
  route: 'client-server',
  channel: 'billing',
});

describe('ZLinkEvents', () => {
  it('counts per type and per delivery failure; per-message events (ok, selection) are counted by metrics, not here', () => {
    const events = new ZLinkEvents();
    events.emit(delivery('ok'));
    events.emit(delivery('no_handler'));
    events.emit(delivery('no_handler'));
    events.emit({ type: 'listening', channel: 'billing', endpoint: 'tcp://127.0.0.1:1' });
    expect(events.count('delivery')).toBe(2);
    expect(events.count('delivery:no_handler')).toBe(2);
    expect(events.count('delivery:ok')).toBe(0);
    expect(events.count('listening')).toBe(1);
    expect(events.count('drain')).toBe(0);
    const scope = events.metrics.scope('client-server', 'billing', undefined);
    expect(scope.handlers.failures.get('no_handler')).toBe(2);
  });

  it('per-message events reach only listeners that asked for them, and `perMessage` says whether anyone did', () => {
    const events = new ZLinkEvents();
    const lifecycle: string[] = [];
    const everything: string[] = [];
    expect(events.perMessage).toBe(false);
    const offLifecycle = events.subscribe((e) => lifecycle.push(e.type), { perMessage: false });
    expect(events.perMessage).toBe(false);
    const offAll = events.subscribe((e) => everything.push(e.type));
    expect(events.perMessage).toBe(true);
    events.emit(delivery('ok'));
    events.emit(delivery('no_handler'));
    expect(lifecycle).toEqual(['delivery']);
    expect(everything).toEqual(['delivery', 'delivery']);
    offAll();
    expect(events.perMessage).toBe(false);
    offLifecycle();
  });

  it('listeners receive events in order until they unsubscribe', () => {
    const events = new ZLinkEvents();
    const seen: string[] = [];
    const off = events.subscribe((e) => seen.push(e.type));
    events.emit(delivery('ok'));
    events.emit({ type: 'drain', channel: 'billing', phase: 'started' });
    off();
    events.emit(delivery('ok'));
    expect(seen).toEqual(['delivery', 'drain']);
  });

  it('a throwing listener does not stop the others or the emitter', () => {
    const events = new ZLinkEvents();
    const seen: string[] = [];
    events.subscribe(() => {
      throw new Error('listener bug');
    });
    events.subscribe((e) => seen.push(e.type));
    expect(() => events.emit(delivery('ok'))).not.toThrow();
    expect(seen).toEqual(['delivery']);
  });

  it('a listener that unsubscribes during emit does not disturb the current round', () => {
    const events = new ZLinkEvents();
    const seen: string[] = [];
    const offA = events.subscribe(() => {
      seen.push('a');
      offA();
    });
    events.subscribe(() => seen.push('b'));
    events.emit(delivery('ok'));
    events.emit(delivery('ok'));
    expect(seen).toEqual(['a', 'b', 'b']);
  });
});
