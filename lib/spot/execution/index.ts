export * from './object-turns.js';
export * from './object-timers.js';
export { currentTurn, selfRequestRefusal, type TurnContext } from './turn-context.js';
export { isHandedOff } from './turn-outcomes.js';
