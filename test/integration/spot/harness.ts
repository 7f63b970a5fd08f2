import {
  MemoryLocationStore,
  ObjectClassRegistry,
  type ObjectClassDescription,
  type ZLinkOptions,
  ZLinkRuntime,
  lifecycleHooksOf,
} from '../../../lib/index.js';

/** A plain (non-Nest) object class description: handlers are its methods, by packet name. */
export function objectClass(
  kind: 'spot' | 'actor',
  type: string,
  token: new () => object,
  handlers: Record<string, { method: string; kind?: 'send' | 'request' }[]> | string[],
): ObjectClassDescription {
  const list = Array.isArray(handlers)
    ? handlers.flatMap((packet) => [
        { packet, kind: 'request' as const, method: packet, source: `${token.name}.${packet}` },
        { packet, kind: 'send' as const, method: packet, source: `${token.name}.${packet}` },
      ])
    : Object.entries(handlers).flatMap(([packet, hs]) =>
        hs.map((h) => ({
          packet,
          kind: h.kind ?? 'request',
          method: h.method,
          source: `${token.name}.${h.method}`,
        })),
      );
  return {
    kind,
    type,
    token,
    source: token.name,
    options: {},
    handlers: list,
    subscriptions: [],
    hooks: lifecycleHooksOf(token.prototype as object),
  };
}

export function registry(...classes: ObjectClassDescription[]): ObjectClassRegistry {
  const r = new ObjectClassRegistry();
  for (const c of classes) r.register(c);
  return r;
}

/** Options of one runtime on the shared object mesh `objects` (auto discovery through `store`). */
export function objectMeshOptions(
  store: MemoryLocationStore,
  role: 'client' | 'server',
  rid: string,
  extra: Partial<ZLinkOptions> = {},
): ZLinkOptions {
  return {
    locationStore: {
      instance: store,
      lease: { ttlMs: 3000, refreshMs: 500, refreshTimeoutMs: 500, marginMs: 500 },
      fullReadIntervalMs: 500,
    },
    meshes: {
      objects: { rid, listen: { bindHost: '127.0.0.1', port: 0 }, objectRole: role, discovery: 'auto' },
    },
    ...extra,
  } as ZLinkOptions;
}

export async function startRuntime(
  options: ZLinkOptions,
  classes?: ObjectClassRegistry,
): Promise<ZLinkRuntime> {
  const runtime = new ZLinkRuntime(options);
  if (classes) runtime.registerObjectClasses(classes);
  await runtime.start();
  return runtime;
}

/** Asks Actor `id` (a test class with a `where` handler) for its Spot and the node it runs on. */
export const where = (client: ZLinkRuntime, id: string) =>
  client.routeClient.toActor(id).request('where', null).async() as Promise<{ spot?: string; node: string }>;

/** Asks Spot `id` (a test class with a `members` handler) for its members and the node it runs on. */
export const membersOf = (client: ZLinkRuntime, id: string) =>
  client.routeClient.toSpot(id).request('members', null).async() as Promise<{
    members: string[];
    node: string;
  }>;
