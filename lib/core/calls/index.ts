/**
 * Calls in flight and their handling: the pending table, server selection, the job queue, handler
 * tables, and the waiting they share (deadlines as timers take them, the sync-or-async test).
 */
export * from './handlers.js';
export * from './pending.js';
export * from './selector.js';
export * from './job-queue.js';
export * from './timers.js';
export * from './thenable.js';
