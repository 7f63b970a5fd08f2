import type { ZLinkEvents } from '../../core/observe/index.js';
import type {
  ObjectKey,
  RelocationEnd,
  RelocationRecord,
  RelocationStore,
  StoreVersion,
} from '../../core/ports/index.js';
import type { RelocationResult } from './move-context.js';

/**
 * A move's record in the Relocation Store (docs/protocol.md#relocation-store: what remains after a move;
 * docs/protocol.md#relocation-steps), one per object, each change a compare-and-swap: `preparing` before the
 * source seals, then `committed` (with the target's fences and the follow duration) or `aborted`. The moving
 * state never passes through it. The record is a trace for operators and for a node that restarts with moves
 * in flight, never a source of routes: no call reads it.
 */
export class MoveRecord {
  private constructor(
    private readonly store: RelocationStore,
    private readonly key: ObjectKey,
    private readonly preparing: RelocationRecord,
    private readonly version: StoreVersion,
  ) {}

  /**
   * Writes `preparing` for the move (over the object's previous move record, whatever it is). Rejects
   * with the store's error when it cannot be reached, or when the record kept changing under it: the
   * move then does not start.
   */
  static async open(store: RelocationStore, key: ObjectKey, record: RelocationRecord): Promise<MoveRecord> {
    // The previous move's last write may land in between (it is not awaited): read again and retry.
    for (let attempt = 0; attempt < 3; attempt++) {
      const previous = await store.get(key);
      const cas = await store.compareAndSet(key, previous?.version ?? 'absent', record);
      if (cas.ok) return new MoveRecord(store, key, record, cas.version);
    }
    throw new Error('the record kept changing while the move wrote it');
  }

  /**
   * Writes how the move ended. After the fact: the object runs on regardless, so a failed write is
   * reported (`object_relocation` `recordFailed`), never retried into the object's way.
   */
  async close(
    result: RelocationResult,
    target: RelocationEnd,
    followMs: number,
    events: ZLinkEvents,
  ): Promise<void> {
    const next: RelocationRecord =
      result.outcome === 'committed'
        ? { ...this.preparing, state: 'committed', target, followMs }
        : { ...this.preparing, state: 'aborted' };
    try {
      await this.store.compareAndSet(this.key, this.version, next);
    } catch (error) {
      events.emit({
        type: 'object_relocation',
        phase: 'recordFailed',
        mesh: this.key.mesh,
        objectKind: this.key.kind,
        id: this.key.id,
        relocationId: this.preparing.relocationId,
        reason: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
