/** Calls in flight and their handling: the pending table, server selection, the job queue, handler tables. */
export * from './handlers.js';
export * from './pending.js';
export * from './selector.js';
export * from './job-queue.js';
