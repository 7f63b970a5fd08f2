import { expect } from '@jest/globals';
import { type ZLinkOptions, ZLinkError, normalizeOptions } from '../../../lib/core/index.js';

/** Runs `normalizeOptions` on anything (bad shapes included) and returns the Configuration error. */
export function configError(options: unknown): ZLinkError {
  let thrown: unknown;
  try {
    normalizeOptions(options as ZLinkOptions);
  } catch (e) {
    thrown = e;
  }
  if (!(thrown instanceof ZLinkError)) throw new Error(`expected a ZLinkError, got ${String(thrown)}`);
  expect(thrown.code).toBe('Configuration');
  return thrown;
}

/** The field a Configuration error names (`details.field`), to assert the exact one. */
export function fieldOf(error: ZLinkError): unknown {
  return (error.details as { field?: unknown } | undefined)?.field;
}
