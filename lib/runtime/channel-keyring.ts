import type { ZLinkEvents } from '../core/observe/index.js';
import type { NormalizedEndpoint, NormalizedOptions } from '../core/options/index.js';
import { CurveKeyring } from '../transport/index.js';

/**
 * The keyring of a runtime's ClientServer and fanout sockets, when it has `security.curve` and any
 * such channel: it knows the keys given with every manual endpoint here (mesh peers, servers,
 * publishers) besides `allow` and what the Location Store lists.
 */
export function channelKeyring(
  options: NormalizedOptions,
  tag: string,
  events: ZLinkEvents,
): CurveKeyring | undefined {
  const { curve } = options.security;
  if (curve === undefined || (options.clientServer.size === 0 && options.fanout.size === 0)) return undefined;
  const entries: NormalizedEndpoint[] = [];
  for (const m of options.meshes.values()) entries.push(...m.peers);
  for (const cs of options.clientServer.values()) entries.push(...(cs.client?.connect ?? []));
  for (const f of options.fanout.values()) entries.push(...(f.subscriber?.connect ?? []));
  const configured = entries.flatMap((e) => e.publicKeys);
  return new CurveKeyring(curve, configured, tag, events);
}
