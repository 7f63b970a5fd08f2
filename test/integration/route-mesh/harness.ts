/** Building blocks shared by the RouteMesh integration suites (real zeromq on 127.0.0.1, port 0). */
import type {
  ChannelHandlerFn,
  MeshOptions,
  MessageKind,
  NodeHandlerFn,
  ZLinkOptions,
} from '../../../lib/core/index.js';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import type { Cleanup } from '../../helpers/index.js';

export const listen = { port: 0, bindHost: '127.0.0.1' } as const;

export interface MeshNodeSpec {
  readonly mesh?: string;
  readonly rid: string;
  readonly peers?: MeshOptions['peers'];
  readonly channels?: MeshOptions['channels'];
  /** Channel handlers: [channel, kind, packet, handler]. */
  readonly handlers?: readonly (readonly [string, MessageKind, string, ChannelHandlerFn])[];
  /** Node direct handlers: [kind, packet, handler]. */
  readonly nodeHandlers?: readonly (readonly [MessageKind, string, NodeHandlerFn])[];
  readonly extra?: Omit<ZLinkOptions, 'meshes'>;
}

/** Starts a runtime with one MeshNode (default mesh `game`) and tracks it for cleanup. */
export async function startNode(cleanup: Cleanup, spec: MeshNodeSpec): Promise<ZLinkRuntime> {
  const mesh = spec.mesh ?? 'game';
  const runtime = cleanup.add(
    new ZLinkRuntime({
      ...spec.extra,
      meshes: {
        [mesh]: { rid: spec.rid, listen, peers: spec.peers ?? [], channels: spec.channels ?? {} },
      },
    }),
  );
  for (const [channel, kind, packet, handler] of spec.handlers ?? []) {
    runtime.registerChannelHandler({ channel, kind, packet, handler, source: `${spec.rid}.${packet}` });
  }
  for (const [kind, packet, handler] of spec.nodeHandlers ?? []) {
    runtime.registerNodeHandler({ mesh, kind, packet, handler, source: `${spec.rid}.node.${packet}` });
  }
  await runtime.start();
  return runtime;
}

/** A `who` request handler that answers with the node's name. */
export function who(name: string): ChannelHandlerFn {
  return () => name;
}

export function endpointOf(runtime: ZLinkRuntime, mesh = 'game'): string {
  const endpoint = runtime.meshEndpoint(mesh);
  if (!endpoint) throw new Error(`no MeshNode on '${mesh}'`);
  return endpoint;
}

/** Counts per answer. */
export function tally(answers: readonly unknown[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) out[String(a)] = (out[String(a)] ?? 0) + 1;
  return out;
}
