export { NetSessionListener } from './net-session-listener.js';
