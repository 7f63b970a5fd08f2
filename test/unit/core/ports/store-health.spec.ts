import { describe, expect, it } from '@jest/globals';
import {
  StoreHealth,
  ZLinkError,
  ZLinkEvents,
  type ZLinkEvent,
  watchedLocationStore,
} from '../../../../lib/core/index.js';
import { MemoryLocationStore } from '../../../../lib/store/memory/memory-location-store.js';

/** The one store-recovery rule: failing from the first failure, recovered at the first answer after it. */
function health(): { health: StoreHealth; seen: string[]; recoveries: () => number } {
  const events = new ZLinkEvents();
  const seen: string[] = [];
  events.subscribe((e: ZLinkEvent) => {
    if (e.type === 'store') seen.push(e.state);
  });
  const h = new StoreHealth(events);
  let n = 0;
  h.onRecovered(() => n++);
  return { health: h, seen, recoveries: () => n };
}

describe('StoreHealth', () => {
  it('answers while healthy recover nothing; the first answer after failures recovers once', () => {
    const { health: h, seen, recoveries } = health();
    h.answered();
    expect(recoveries()).toBe(0);
    h.failed('down');
    h.failed('still down');
    expect(h.isFailing).toBe(true);
    h.answered();
    h.answered();
    expect(recoveries()).toBe(1);
    expect(seen).toEqual(['failing', 'recovered']);
  });

  it("watch: a rejection fails, a ProtocolError is the store's answer, an InvalidArgument says nothing", async () => {
    const { health: h, recoveries } = health();
    await expect(h.watch(Promise.reject(new Error('ECONNRESET')))).rejects.toThrow('ECONNRESET');
    expect(h.isFailing).toBe(true);
    await expect(h.watch(Promise.reject(new ZLinkError('InvalidArgument', 'bad key')))).rejects.toMatchObject(
      { code: 'InvalidArgument' },
    );
    expect(h.isFailing).toBe(true);
    await expect(
      h.watch(Promise.reject(new ZLinkError('ProtocolError', 'unreadable'))),
    ).rejects.toMatchObject({ code: 'ProtocolError' });
    expect(h.isFailing).toBe(false);
    expect(recoveries()).toBe(1);
    await expect(h.watch(Promise.resolve(7))).resolves.toBe(7);
  });

  it("an answer that outlived its caller still recovers; a listener's throw does not stop the others", async () => {
    const { health: h, recoveries } = health();
    let release: (v: string) => void = () => undefined;
    const late = h.watch(new Promise<string>((r) => (release = r)));
    h.onRecovered(() => {
      throw new Error('listener bug');
    });
    h.failed('the caller gave up');
    release('answer');
    await expect(late).resolves.toBe('answer');
    expect(recoveries()).toBe(1);
  });

  it('a watched Location Store keeps what the store offers (ping, authorityStore) and reports through it', async () => {
    const { health: h, recoveries } = health();
    const inner = new MemoryLocationStore();
    const store = watchedLocationStore(inner, h);
    expect(typeof store.authorityStore).toBe('function');
    expect(store.ping === undefined).toBe(inner.ping === undefined);
    h.failed('down');
    await store.list('server', 'nobody');
    expect(recoveries()).toBe(1);
  });
});
