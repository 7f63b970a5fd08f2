/** Spot and Actor classes as the layers above describe them, and the contexts their handlers see. */
export * from './object-classes.js';
export * from './object-context.js';
