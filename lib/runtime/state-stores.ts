import type { StateStore } from '../core/ports/index.js';
import type { NormalizedOptions } from '../core/options/index.js';
import {
  type ObjectClassDescription,
  type ObjectClassRegistry,
  persistStoreOf,
} from '../core/objects/index.js';
import { type DurableClass, StateBatcher } from '../spot/index.js';
import { createStateStore } from '../store/index.js';

/**
 * The State Stores of an object server (docs/objects.md#durable-objects): each one a persistent class
 * uses is started with the object layer and reached through one batcher, shared by every class that
 * names it; the stores the runtime built are closed with it (one given as an `instance` stays open:
 * it is the application's).
 */
export class RuntimeStateStores {
  private readonly byClass = new Map<string, DurableClass>();
  private readonly started: { store: StateStore; batcher: StateBatcher; owned: boolean }[] = [];

  /**
   * Starts every store a class of `classes` names and maps each persistent class to its batcher.
   * Rejects as the store's `start()` does (`Configuration` or `Unavailable` naming it).
   */
  async start(options: NormalizedOptions, classes: ObjectClassRegistry): Promise<void> {
    const batchers = new Map<string, StateBatcher>();
    for (const cls of classes.all()) {
      const persist = cls.options.persist;
      if (persist === undefined) continue;
      const name = persistStoreOf(cls.source, persist, options.stateStores);
      let batcher = batchers.get(name);
      if (batcher === undefined) {
        const entry = options.stateStores.get(name);
        if (entry === undefined) continue;
        const { store, owned } = await createStateStore(entry);
        try {
          await store.start();
        } catch (error) {
          if (owned) await store.close().catch(() => undefined);
          throw error;
        }
        batcher = new StateBatcher(store);
        batchers.set(name, batcher);
        this.started.push({ store, batcher, owned });
      }
      this.byClass.set(`${cls.kind} ${cls.type}`, { batcher, persist });
    }
  }

  /** The batcher and `persist` option of a persistent class; `undefined` for one that is not. */
  readonly durableOf = (cls: ObjectClassDescription): DurableClass | undefined =>
    this.byClass.get(`${cls.kind} ${cls.type}`);

  /** After the object layer closed (its last writes landed): no new rows; the stores it built close. */
  async close(): Promise<void> {
    for (const s of this.started.splice(0)) {
      s.batcher.close();
      if (s.owned) await s.store.close().catch(() => undefined);
    }
  }
}
