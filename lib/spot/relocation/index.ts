export * from './follow-routes.js';
