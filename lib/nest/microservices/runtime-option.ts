import { type ZLinkOptions, configurationError } from '../../core/index.js';
import { ZLinkRuntime } from '../../runtime/index.js';

/**
 * What `ZLinkServer` and `ZLinkClientProxy` serve through: `{ runtime }` — that runtime, shared (its
 * owner starts and closes it); `ZLinkOptions` — a new runtime, owned (validated here, at once).
 */
export function runtimeFrom(options: unknown, owner: string): { runtime: ZLinkRuntime; owned: boolean } {
  const shared = (options as { runtime?: unknown } | undefined)?.runtime;
  if (shared instanceof ZLinkRuntime) return { runtime: shared, owned: false };
  if (shared !== undefined) throw configurationError(`${owner} runtime`, 'must be a ZLinkRuntime instance');
  return { runtime: new ZLinkRuntime(options as ZLinkOptions), owned: true };
}
