import { type DescriptorKind, type LocationDescriptor, descriptorScope } from '../../core/ports/index.js';

/** Names are URI-encoded inside keys: a `{`, `}` or `:` in a ChannelName must not change the layout. */
const enc = encodeURIComponent;

/**
 * Key layout under `prefix`, one hash slot per (kind, scope):
 * - `<prefix>:{<kind>:<scope>}:d:<rid>:<generation>` — a descriptor (hash: revision, body), with the lease as
 *   TTL;
 * - `<prefix>:{<kind>:<scope>}:i` — index (sorted set: member `<rid>:<generation>`, score = lease end), with
 *   the longest lease it lists as TTL;
 * - `<prefix>:{<kind>:<scope>}:c` — change notifications (pub/sub channel).
 */
export class StoreKeys {
  constructor(private readonly prefix: string) {}

  slot(kind: DescriptorKind, scope: string): string {
    return `${this.prefix}:{${kind}:${enc(scope)}}`;
  }

  forDescriptor(d: LocationDescriptor) {
    const slot = this.slot(d.kind, descriptorScope(d));
    const member = `${enc(d.rid)}:${enc(d.generation)}`;
    return { key: `${slot}:d:${member}`, index: `${slot}:i`, channel: `${slot}:c`, member };
  }

  forScope(kind: DescriptorKind, scope: string) {
    const slot = this.slot(kind, scope);
    return { index: `${slot}:i`, descriptorPrefix: `${slot}:d:`, channel: `${slot}:c` };
  }
}
