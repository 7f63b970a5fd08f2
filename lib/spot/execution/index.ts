// An object's turns: one at a time, in order, each ended once; its timers run as turns too.
export { ObjectTurns } from './object-turns.js';
export type { DurableTimer, TimerSnapshot } from './object-timers.js';
export type { TurnJob } from './turn-options.js';
export { currentTurn, selfRequestRefusal } from './turn-context.js';
export { isHandedOff } from './turn-outcomes.js';
