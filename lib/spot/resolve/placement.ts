import { ZLinkError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import type { MeshLink, ObjectPeer } from '../../core/ports/index.js';

/** How a node advertises the object types it hosts in its mesh state: `spot:Room`, `actor:Player`. */
export function advertisedType(kind: ObjectKind, type: string): string {
  return `${kind}:${type}`;
}

/**
 * Where an object goes among the ready object servers hosting its type (docs/decisions.md "The object layer
 * wired"): in turn, in NodeRid order, one rotation per node for creations and moves alike. A draining server
 * does not announce its types, so it is never among them.
 */
export class Placement {
  private turn = 0;

  constructor(private readonly link: MeshLink) {}

  /** The ready object servers hosting (`kind`, `type`) now. */
  servers(kind: ObjectKind, type: string): readonly ObjectPeer[] {
    return this.link.objectServers(advertisedType(kind, type));
  }

  /** The next of `servers` in turn (`servers` not empty). */
  next(servers: readonly ObjectPeer[]): ObjectPeer {
    const sorted = [...servers].sort((a, b) => (a.rid < b.rid ? -1 : 1));
    return sorted[this.turn++ % sorted.length] as ObjectPeer;
  }

  /**
   * The owner of a new object: `node` when given (this node only when it hosts the type, another only
   * when it is a ready server hosting it), else this node when it hosts the type and takes objects,
   * else the servers hosting it in turn. `NotFound` when none qualifies.
   */
  forCreation(
    self: string,
    takesHere: boolean | 'notHosted',
    kind: ObjectKind,
    type: string,
    node: string | undefined,
    what: string,
  ): string | ZLinkError {
    if (node !== undefined) {
      if (node === self)
        return takesHere !== 'notHosted'
          ? node
          : new ZLinkError('NotFound', `${what}: this node hosts no ${kind} type '${type}'`);
      return this.servers(kind, type).some((p) => p.rid === node)
        ? node
        : new ZLinkError(
            'NotFound',
            `${what}: node '${node}' is not a ready object server hosting ${kind} type '${type}'`,
          );
    }
    if (takesHere === true) return self;
    const servers = this.servers(kind, type);
    if (servers.length === 0)
      return new ZLinkError('NotFound', `${what}: no ready object server hosts ${kind} type '${type}'`);
    return this.next(servers).rid;
  }
}
