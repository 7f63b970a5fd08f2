import { describe, expect, it } from '@jest/globals';
import { DEFAULT_LEASE_TIMING, ZLinkError, normalizeLeaseTiming } from '../../../../lib/core/index.js';

/** Lease timing defaults and the relation checked at startup (docs/protocol.md#owner-lease-and-fencing). */
describe('lease timing', () => {
  it('defaults to ttl 10 s, refresh 3 s, one refresh at most 2 s, margin 1 s', () => {
    expect(normalizeLeaseTiming('lease', undefined)).toEqual({
      ttlMs: 10000,
      refreshMs: 3000,
      refreshTimeoutMs: 2000,
      marginMs: 1000,
    });
    expect(DEFAULT_LEASE_TIMING.ttlMs).toBe(10000);
  });

  it('refresh + refreshTimeout + margin must stay under ttl; the error names the field and the sum', () => {
    const error = (() => {
      try {
        normalizeLeaseTiming('locationStore.lease', { ttlMs: 6000 });
      } catch (e) {
        return e as ZLinkError;
      }
      return undefined;
    })();
    expect(error).toMatchObject({ code: 'Configuration' });
    expect(error?.message).toContain('locationStore.lease');
    expect(error?.message).toContain('(6000)');
    expect(normalizeLeaseTiming('l', { ttlMs: 6001 }).ttlMs).toBe(6001);
  });

  it.each([
    ['a non-object', 5, 'l'],
    ['a zero refresh', { refreshMs: 0 }, 'l.refreshMs'],
    ['a fractional margin', { marginMs: 1.5 }, 'l.marginMs'],
  ])('%s fails naming %s', (_what, value, field) => {
    expect(() => normalizeLeaseTiming('l', value)).toThrow(field);
  });
});
