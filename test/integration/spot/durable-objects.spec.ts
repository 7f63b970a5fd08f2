import { afterEach, describe, expect, it } from '@jest/globals';
import {
  MemoryLocationStore,
  MemoryRelocationStore,
  MemoryStateStore,
  type ObjectClassDescription,
  type PersistOptions,
  type ZLinkActivationContext,
  type ZLinkEvent,
  type ZLinkObjectContext,
  type ZLinkRuntime,
} from '../../../lib/index.js';
import { outcome, waitFor } from '../../helpers/index.js';
import { objectClass, objectMeshOptions, registry, startRuntime } from './harness.js';

/**
 * Persistent Actors in one process (issue 54; docs/objects.md#durable-objects), real sockets between
 * runtimes, the memory stores shared by them as a Redis would be: state saved after every turn or when
 * asked, written on a stop, restored by the next get-or-create wherever it lands, a tombstone on
 * destroy, the State Store's epoch handed over by a move. Crashes, pauses and outages, which need
 * processes, are in test/e2e.
 */

/** What each activation's `onActivate` saw, in order, by id. */
/** The outcomes of `saveLater`'s saves. */
const lateSaves: Promise<string>[] = [];

const activations = new Map<string, (ZLinkActivationContext['restored'] | 'fresh')[]>();

class Player {
  x = 0;
  log: string[] = [];
  node = '';
  onActivate(ctx: ZLinkActivationContext): void {
    this.node = ctx.self.rid;
    const seen = activations.get(ctx.id) ?? [];
    seen.push(ctx.restored ?? 'fresh');
    activations.set(ctx.id, seen);
  }
  move(by: number): { x: number; node: string } {
    this.x += by;
    return { x: this.x, node: this.node };
  }
  read(): { x: number; log: string[]; node: string; rang: number } {
    return { x: this.x, log: this.log, node: this.node, rang: this.rang };
  }
  rang = 0;
  /** A durable timeout: saved with the state, it rings wherever the player is when it comes due. */
  remind(ms: number, ctx: ZLinkObjectContext): boolean {
    ctx.timers.setTimeout(() => this.ring(), ms, 'ring', { durable: true });
    return true;
  }
  ring(): void {
    this.rang++;
  }
  /** What arming a durable timer the wrong way throws. */
  badTimer(how: string, ctx: ZLinkObjectContext): string {
    try {
      if (how === 'noLabel') ctx.timers.setTimeout(() => undefined, 10, undefined, { durable: true });
      else ctx.timers.setTimeout(() => undefined, 10, 'nothingHere', { durable: true });
      return 'armed';
    } catch (error) {
      return `${(error as { code: string }).code}: ${(error as Error).message}`;
    }
  }
  async note(text: string, ctx: ZLinkObjectContext): Promise<number> {
    this.log.push(text);
    await ctx.state.save();
    return ctx.state.version;
  }
  /** Arms a plain timer, far off: an object with a timer is never put to sleep. */
  arm(_: unknown, ctx: ZLinkObjectContext): boolean {
    ctx.timers.setTimeout(() => undefined, 600_000, 'wake');
    return true;
  }
  /** Starts a save after its turn ended (a plain timer, not `ctx.timers`): it must be refused. */
  saveLater(_: unknown, ctx: ZLinkObjectContext): boolean {
    setTimeout(() => {
      lateSaves.push(
        ctx.state.save().then(
          () => 'saved',
          (e: { code: string; details: { reason: string } }) => `${e.code} ${e.details.reason}`,
        ),
      );
    }, 5);
    return ctx.state.persistent;
  }
  capture(): { x: number; log: string[]; rang: number } {
    return { x: this.x, log: this.log, rang: this.rang };
  }
  restore(state: { x: number; log: string[]; rang: number }, ctx: { self: { rid: string } }): void {
    this.x = state.x;
    this.log = state.log;
    this.rang = state.rang;
    this.node = ctx.self.rid;
  }
}

const playerClass = (type: string, persist: PersistOptions): ObjectClassDescription => ({
  ...objectClass('actor', type, Player, ['move', 'read', 'note', 'saveLater', 'arm', 'remind', 'badTimer']),
  options: { relocatable: true, persist },
});

const runtimes: ZLinkRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  activations.clear();
  lateSaves.length = 0;
});

interface World {
  location: MemoryLocationStore;
  relocation: MemoryRelocationStore;
  states: MemoryStateStore;
}

const world = (): World => ({
  location: new MemoryLocationStore(),
  relocation: new MemoryRelocationStore(),
  states: new MemoryStateStore(),
});

async function server(w: World, rid: string): Promise<ZLinkRuntime> {
  const classes = registry(
    playerClass('player', {}),
    playerClass('sleeper', { idleMs: 1000 }),
    playerClass('scribe', { mode: 'explicit' }),
    objectClass('actor', 'guest', Player, ['saveLater', 'badTimer']),
    { ...objectClass('spot', 'den', Player, ['move', 'read']), options: { persist: { idleMs: 1000 } } },
  );
  const r = await startRuntime(
    objectMeshOptions(w.location, 'server', rid, {
      relocationStore: { instance: w.relocation },
      stateStores: { players: { instance: w.states } },
    }),
    classes,
  );
  runtimes.push(r);
  return r;
}

async function client(w: World, peers: number): Promise<ZLinkRuntime> {
  const r = await startRuntime(objectMeshOptions(w.location, 'client', `client-${runtimes.length}`));
  runtimes.push(r);
  await r.waitForPeers('objects', peers);
  return r;
}

async function stop(r: ZLinkRuntime): Promise<void> {
  runtimes.splice(runtimes.indexOf(r), 1);
  await r.close();
}

/**
 * Waits until client `c`'s peers on the object mesh are exactly `rids`: a stopped server's link may
 * outlive its close for a moment, and a creation placed on it then ends `RouteError`.
 */
async function peersAre(c: ZLinkRuntime, rids: string[]): Promise<void> {
  const now = () =>
    (c.snapshot().meshes.find((m) => m.mesh === 'objects')?.peers ?? [])
      .map((p) => p.rid)
      .sort()
      .join(',');
  await waitFor(() => now() === [...rids].sort().join(','), 10_000, `peers ${rids.join(', ')}`);
}

/** The `player` type's counters on runtime `r`. */
const players = (r: ZLinkRuntime) => r.metrics().objects.find((o) => o.type === 'player');

const ask = (c: ZLinkRuntime, id: string, packet: string, payload: unknown = null) =>
  c.routeClient.toActor(id).request(packet, payload).async();

describe('persistent Actors (every turn, the default mode)', () => {
  it('come back with their state after their server stopped, told what they were restored from', async () => {
    const w = world();
    const a = await server(w, 'server-a');
    const c = await client(w, 1);
    await c.objects.getOrCreateActor('player', 'p-1');
    for (let i = 1; i <= 5; i++) expect(await ask(c, 'p-1', 'move', 1)).toMatchObject({ x: i });
    await stop(a);
    const b = await server(w, 'server-b');
    await peersAre(c, ['server-b']);

    await expect(c.objects.createActor('player', 'p-1')).rejects.toMatchObject({
      code: 'InvalidOperation',
      details: { reason: 'saved' },
    });
    await c.objects.getOrCreateActor('player', 'p-1');
    expect(await ask(c, 'p-1', 'read')).toMatchObject({ x: 5, node: 'server-b' });
    const seen = activations.get('p-1') ?? [];
    expect(seen[0]).toBe('fresh');
    // One write for the state onActivate left (x = 0), one per changing turn (5); the stop's capture
    // changed nothing, so it wrote nothing.
    expect(seen.at(-1)).toMatchObject({ version: 6, schemaVersion: 1 });
    // Each node counts what it did: a's six acknowledged writes, b's one restore.
    expect(players(a)).toMatchObject({ stateWrites: { ok: 6, failed: 0, fenced: 0 } });
    expect(players(b)).toMatchObject({ restores: 1, stateWrites: { ok: 0 } });
  });

  it('start over after a destroy: the tombstone keeps nothing to restore', async () => {
    const w = world();
    await server(w, 'server-a');
    const c = await client(w, 1);
    const ref = await c.objects.getOrCreateActor('player', 'p-2');
    await ask(c, 'p-2', 'move', 7);
    await c.objects.destroy(ref);
    await c.objects.getOrCreateActor('player', 'p-2');
    expect(await ask(c, 'p-2', 'read')).toMatchObject({ x: 0 });
    expect(activations.get('p-2')).toEqual(['fresh', 'fresh']);
  });

  it('write on after a move with the epoch it handed over, and restore the latest state', async () => {
    const w = world();
    await server(w, 'server-a');
    await server(w, 'server-b');
    const c = await client(w, 2);
    await c.objects.createActor('player', 'p-3', { node: 'server-a' });
    await ask(c, 'p-3', 'move', 2);
    await expect(
      c.objects.relocate({ kind: 'actor', id: 'p-3' }, { target: 'server-b' }),
    ).resolves.toMatchObject({
      outcome: 'committed',
    });
    expect(await ask(c, 'p-3', 'move', 3)).toMatchObject({ x: 5, node: 'server-b' });
    await Promise.all(runtimes.filter((r) => r !== c).map((r) => stop(r)));
    await server(w, 'server-c');
    await peersAre(c, ['server-c']);
    await c.objects.getOrCreateActor('player', 'p-3');
    expect(await ask(c, 'p-3', 'read')).toMatchObject({ x: 5, node: 'server-c' });
    // Fresh on a (written: versions 1 and 2), moved to b (no onActivate), which wrote version 3.
    expect(activations.get('p-3')).toEqual(['fresh', expect.objectContaining({ version: 3 })]);
  });
});

describe('passivation (persist.idleMs)', () => {
  it('puts an idle object to sleep with its state, and a get-or-create wakes it; one with a timer stays', async () => {
    const w = world();
    const a = await server(w, 'server-a');
    const c = await client(w, 1);
    const slept: { id: string; at: number }[] = [];
    a.events.subscribe(
      (e: ZLinkEvent) => {
        if (e.type === 'object' && e.state === 'deactivated' && e.reason === 'passivated')
          slept.push({ id: e.id, at: Date.now() });
      },
      { perMessage: false },
    );
    await c.objects.getOrCreateActor('sleeper', 'z-1');
    await c.objects.getOrCreateActor('sleeper', 'z-2');
    await ask(c, 'z-1', 'move', 9);
    await ask(c, 'z-2', 'arm');
    const lastTurn = Date.now();
    await waitFor(() => slept.length > 0, 10_000, 'z-1 put to sleep');
    expect(slept[0]?.id).toBe('z-1');
    // Asleep, it is no object: the client's cached route is stale (that call never ran), then plain
    // calls end NotFound until a get-or-create brings it back.
    expect(await outcome(ask(c, 'z-1', 'read'))).toMatchObject({
      error: { code: 'Unavailable', details: { reason: 'staleRoute' } },
    });
    await expect(ask(c, 'z-1', 'read')).rejects.toMatchObject({ code: 'NotFound' });
    await c.objects.getOrCreateActor('sleeper', 'z-1');
    expect(await ask(c, 'z-1', 'read')).toMatchObject({ x: 9 });
    expect(activations.get('z-1')).toEqual(['fresh', expect.objectContaining({ schemaVersion: 1 })]);
    // z-2's timer keeps it awake: two idle times after its last turn it still answers (z-1, woken,
    // may have gone back to sleep meanwhile).
    await waitFor(() => Date.now() - lastTurn > 2500, 5000, 'two idle times');
    expect(slept.map((s) => s.id)).not.toContain('z-2');
    expect(await ask(c, 'z-2', 'read')).toMatchObject({ x: 0 });
  });
});

describe('a sleeping Spot and the Instance intent', () => {
  it('a call with the Instance intent wakes it with its state (after its cached route is dropped)', async () => {
    const w = world();
    const a = await server(w, 'server-a');
    const c = await client(w, 1);
    const den = () => c.routeClient.toSpot('den-1').instance('den');
    expect(await den().request('move', 4).async()).toMatchObject({ x: 4 });
    const dens = () => a.metrics().objects.find((o) => o.type === 'den');
    await waitFor(() => (dens()?.passivations ?? 0) >= 1, 10_000, 'den-1 asleep');
    // The route this client cached before it slept is stale (that call never ran); the next call,
    // which finds no object, creates it: restored.
    expect(await outcome(den().request('read', null).async())).toMatchObject({
      error: { code: 'Unavailable', details: { reason: 'staleRoute' } },
    });
    expect(await den().request('read', null).async()).toMatchObject({ x: 4 });
    expect(dens()).toMatchObject({ restores: 1 });
  });
});

describe('durable timers', () => {
  it('ring where the object came back, on the wall clock; one due meanwhile rings at once', async () => {
    const w = world();
    const a = await server(w, 'server-a');
    const c = await client(w, 1);
    await c.objects.getOrCreateActor('player', 't-1');
    await c.objects.getOrCreateActor('player', 't-2');
    const armed = Date.now();
    await ask(c, 't-1', 'remind', 1500);
    await ask(c, 't-2', 'remind', 200);
    await stop(a);
    // t-2's timeout comes due while no server holds it.
    await waitFor(() => Date.now() - armed > 400, 5000, 't-2 due');
    await server(w, 'server-b');
    await peersAre(c, ['server-b']);
    await c.objects.getOrCreateActor('player', 't-2');
    await c.objects.getOrCreateActor('player', 't-1');
    let t2 = (await ask(c, 't-2', 'read')) as { rang: number };
    for (let i = 0; i < 50 && t2.rang === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      t2 = (await ask(c, 't-2', 'read')) as { rang: number };
    }
    expect(t2.rang).toBe(1);
    expect(await ask(c, 't-1', 'read')).toMatchObject({ rang: 0 });
    let t1 = { rang: 0 };
    while (t1.rang === 0 && Date.now() - armed < 5000) {
      await new Promise((r) => setTimeout(r, 50));
      t1 = (await ask(c, 't-1', 'read')) as { rang: number };
    }
    expect(t1.rang).toBe(1);
    // It rang on its first beat, 1.5 s after it was armed on server-a, not 1.5 s after the restore.
    expect(Date.now() - armed).toBeLessThan(3000);
  });

  it('refuses a durable timer with no label, one naming no method, and on a class that keeps no state', async () => {
    const w = world();
    await server(w, 'server-a');
    const c = await client(w, 1);
    await c.objects.getOrCreateActor('player', 't-3');
    await c.objects.getOrCreateActor('guest', 't-4');
    expect(await ask(c, 't-3', 'badTimer', 'noLabel')).toMatch(/^InvalidArgument: .*needs a label/);
    expect(await ask(c, 't-3', 'badTimer', 'noMethod')).toMatch(
      /^InvalidArgument: .*'nothingHere' names no method/,
    );
    expect(await ask(c, 't-4', 'badTimer', 'noMethod')).toMatch(/^InvalidArgument: .*not persistent/);
  });
});

describe("persistent Actors in mode 'explicit'", () => {
  it('save when asked and when their server stops, and refuse a save from outside their turn', async () => {
    const w = world();
    const a = await server(w, 'server-a');
    const c = await client(w, 1);
    await c.objects.getOrCreateActor('scribe', 's-1');
    expect(await ask(c, 's-1', 'note', 'one')).toBe(1);
    expect(await ask(c, 's-1', 'move', 4)).toMatchObject({ x: 4 });
    expect(await ask(c, 's-1', 'note', 'two')).toBe(2);
    await ask(c, 's-1', 'move', 1);
    await stop(a);
    await server(w, 'server-b');
    await peersAre(c, ['server-b']);
    await c.objects.getOrCreateActor('scribe', 's-1');
    // The stop saved what the last turn left (x = 5), not only what the last save() took (x = 4).
    expect(await ask(c, 's-1', 'read')).toMatchObject({ x: 5, log: ['one', 'two'] });
    expect(activations.get('s-1')?.at(-1)).toMatchObject({ version: 3 });

    expect(await ask(c, 's-1', 'saveLater')).toBe(true);
    await c.objects.getOrCreateActor('guest', 'g-1');
    expect(await ask(c, 'g-1', 'saveLater')).toBe(false);
    await waitFor(() => lateSaves.length === 2, 5000, 'both late saves');
    expect(await Promise.all(lateSaves)).toEqual([
      'InvalidOperation outsideTurn',
      'InvalidOperation notPersistent',
    ]);
  });
});
