import { ZLinkError, errorMessage } from '../core/errors.js';

/**
 * Binds one listener during start: a bind failure is a `Configuration` error naming the listen
 * option (`field`), unless the runtime was closed meanwhile (`Shutdown`); a close that came while
 * it bound also ends the start, so nothing more is opened.
 */
export async function bindListener(
  bind: () => Promise<void>,
  field: string,
  stillStarting: () => boolean,
): Promise<void> {
  try {
    await bind();
  } catch (error) {
    if (!stillStarting()) throw new ZLinkError('Shutdown', 'the runtime was closed while starting');
    throw new ZLinkError('Configuration', `${field}: cannot bind: ${errorMessage(error)}`, {
      cause: error,
      details: { field },
    });
  }
  if (!stillStarting()) throw new ZLinkError('Shutdown', 'the runtime was closed while starting');
}
