import type { DeliveryResult, HandlerFn, MessageKind, ZLinkSessionContext } from '../../core/index.js';

/** What a session's turn needs of its host: the handler tables, the job queue, the counters. */
export interface SessionRunner {
  /** The `@SessionHandler` for (listener, kind, packet), if any. */
  handler(listener: string, kind: MessageKind, packet: string): HandlerFn | undefined;
  /** Runs `handler` under a job permit (the process's handler bound); resolves with its result. */
  run(handler: HandlerFn, payload: unknown, context: ZLinkSessionContext): Promise<unknown>;
  /** Counts a frame that ran no handler, or whose handler failed. */
  failed(listener: string, result: Exclude<DeliveryResult, 'ok'>, packet: string): void;
}
