import { ZLinkError } from '../../core/errors.js';
import { isThenable } from '../../core/calls/index.js';
import type { ZLinkObjectState } from '../../core/objects/index.js';
import { type ObjectTurns, currentTurn } from '../execution/index.js';
import type { DurableState } from './durable-state.js';

/**
 * `ctx.state` of one activation, and where its turns meet its durable state: `save()` for the object's
 * code, the every-turn capture at each turn's end (`ObjectTurns.boundary`). `durable` is set once the
 * activation was restored (or arrived by a move with its epoch) and cleared when it stops writing.
 */
export class ObjectStateHandle implements ZLinkObjectState {
  durable: DurableState | undefined = undefined;

  constructor(
    private readonly turns: ObjectTurns,
    /** Runs the class's `capture()`. */
    private readonly captureHook: () => unknown,
    private readonly what: string,
  ) {}

  get persistent(): boolean {
    return this.durable !== undefined;
  }

  get version(): number {
    return this.durable?.savedVersion ?? 0;
  }

  save(): Promise<void> {
    const d = this.durable;
    if (d === undefined)
      return Promise.reject(
        new ZLinkError('InvalidOperation', `${this.what}: ctx.state.save(): the class is not persistent`, {
          details: { reason: 'notPersistent' },
        }),
      );
    // capture() must read the state between turns or inside this object's own: anywhere else a turn
    // may be halfway through changing it.
    if (currentTurn()?.owner !== this.turns)
      return Promise.reject(
        new ZLinkError('InvalidOperation', `${this.what}: ctx.state.save() outside the object's own turn`, {
          details: { reason: 'outsideTurn' },
        }),
      );
    try {
      const captured = this.captureHook();
      if (isThenable(captured)) return Promise.resolve(captured).then((state) => saved(d, d.capture(state)));
      return saved(d, d.capture(captured));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The every-turn capture, at the end of each turn (in it): throws what `capture()` or the encoding
   * throws, which then ends the turn. A `capture()` that returns a promise is refused: the turn is over
   * before it would settle, and the next one could change the state meanwhile.
   */
  readonly boundary = (): void => {
    const d = this.durable;
    if (d === undefined || d.mode !== 'everyTurn') return;
    try {
      const captured = this.captureHook();
      if (isThenable(captured))
        throw new ZLinkError(
          'InvalidOperation',
          `${this.what}: capture() returned a promise; a persistent class in mode 'everyTurn' must return its state`,
          { details: { reason: 'asyncCapture' } },
        );
      d.turnEnded(d.capture(captured));
    } catch (error) {
      d.dropTurn();
      throw error;
    }
  };

  /** Whether this object's pushes wait for its state (mode `everyTurn`): then give them to `hold`. */
  get holding(): boolean {
    return this.durable?.holdsReplies === true;
  }

  /** Holds `send` (a push of this object) until the state it may show is saved; see `holding`. */
  hold(send: () => void): void {
    this.durable?.hold(send, currentTurn()?.owner === this.turns);
  }
}

function saved(d: DurableState, seq: number): Promise<void> {
  return new Promise((resolve, reject) =>
    d.after(seq, resolve, (e) => reject(new ZLinkError('Unavailable', e.message, { details: e.details }))),
  );
}
