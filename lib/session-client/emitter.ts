import type { SessionClientClose, SessionClientDrop, SessionWelcome } from './session-api.js';

/** The events of a session client and their arguments (docs/sessions.md#the-node-client). */
export interface SessionClientEvents {
  open: [welcome: SessionWelcome];
  push: [packet: string, msg: unknown];
  close: [close: SessionClientClose];
  reconnecting: [delayMs: number];
  dropped: [drop: SessionClientDrop];
  resumed: [welcome: SessionWelcome];
}

/**
 * The browser client's event emitter: `on`, `once`, `off`, as Node's EventEmitter spells them, in a
 * few lines of its own (a bundler would otherwise pull in a polyfill of `node:events`). A listener
 * that throws does not stop the others or the session: its error is thrown again in a microtask, where
 * the page's error handler sees it.
 */
export class SessionEmitter {
  private readonly listeners = new Map<string, { fn: unknown; once: boolean }[]>();

  /** Calls `listener` for every `event` from now on. */
  on<K extends keyof SessionClientEvents>(
    event: K,
    listener: (...args: SessionClientEvents[K]) => void,
  ): this {
    return this.add(event, listener, false);
  }

  /** Calls `listener` for the next `event` only. */
  once<K extends keyof SessionClientEvents>(
    event: K,
    listener: (...args: SessionClientEvents[K]) => void,
  ): this {
    return this.add(event, listener, true);
  }

  /** Stops calling `listener` for `event` (the last one added, when it was added twice). */
  off<K extends keyof SessionClientEvents>(
    event: K,
    listener: (...args: SessionClientEvents[K]) => void,
  ): this {
    const list = this.listeners.get(event);
    const at = list ? list.map((l) => l.fn).lastIndexOf(listener) : -1;
    if (list && at >= 0) list.splice(at, 1);
    return this;
  }

  /** How many listeners `event` has. */
  listenerCount(event: keyof SessionClientEvents): number {
    return this.listeners.get(event)?.length ?? 0;
  }

  /** Calls the listeners of `event` in the order they were added; `false` when it had none. */
  emit(event: string, ...args: unknown[]): boolean {
    const list = this.listeners.get(event);
    if (!list || list.length === 0) return false;
    for (const listener of [...list]) {
      if (listener.once) list.splice(list.indexOf(listener), 1);
      try {
        (listener.fn as (...a: unknown[]) => void)(...args);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    return true;
  }

  private add(event: string, fn: unknown, once: boolean): this {
    const list = this.listeners.get(event) ?? [];
    list.push({ fn, once });
    this.listeners.set(event, list);
    return this;
  }
}
