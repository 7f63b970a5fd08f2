import { configurationError } from '../../core/errors.js';
import type { ZLinkOptions } from '../../core/options/index.js';
import { ZLinkRuntime } from '../../runtime/index.js';

/**
 * Nest's transport options that ZLink refuses rather than ignores: Nest's serializers translate its own
 * packet envelope (`{ pattern, data, id }`, `{ id, response, err, isDisposed }`) to a wire that is only
 * Nest's; ZLink's wire is ZLink records with a msgpack payload, shared with `@ChannelHandler`,
 * `ZLinkRouteClient` and other ZLink nodes, so there is no envelope to hand them.
 */
const NEST_CODEC_OPTIONS = ['serializer', 'deserializer'] as const;

/**
 * What `ZLinkServer` and `ZLinkClientProxy` serve through: `{ runtime }` — that runtime, shared (its
 * owner starts and closes it); `ZLinkOptions` — a new runtime, owned (validated here, at once).
 * Nest's `serializer` / `deserializer` options, in either form: `Configuration` naming the option.
 */
export function runtimeFrom(options: unknown, owner: string): { runtime: ZLinkRuntime; owned: boolean } {
  for (const key of NEST_CODEC_OPTIONS) {
    if ((options as Record<string, unknown> | undefined)?.[key] !== undefined) {
      throw configurationError(
        `${owner} ${key}`,
        'is not supported: ZLink encodes payloads as msgpack on its own wire, shared with @ChannelHandler ' +
          'and ZLinkRouteClient; transform payloads in a pipe or interceptor, or override ' +
          'serializeResponse()/serializeError() in a ZLinkClientProxy subclass',
      );
    }
  }
  const shared = (options as { runtime?: unknown } | undefined)?.runtime;
  if (shared instanceof ZLinkRuntime) return { runtime: shared, owned: false };
  if (shared !== undefined) throw configurationError(`${owner} runtime`, 'must be a ZLinkRuntime instance');
  return { runtime: new ZLinkRuntime(options as ZLinkOptions), owned: true };
}
