/**
 * A call on its way out, whatever the topology: waiting for a target to appear, waiting for room in
 * the chosen socket's pump, and reporting where the call went.
 */
export { type Submission, admitThen } from './admission.js';
export { type SelectionSource, reportSelection } from './selection.js';
export { WakeList } from './wake-list.js';
