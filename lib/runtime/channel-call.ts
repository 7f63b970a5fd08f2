import { ZLinkError } from '../core/errors.js';
import type { TracePropagation } from '../core/wire/index.js';
import type { NormalizedOptions } from '../core/options/index.js';
import type { CallSubmission } from './calls.js';
import type { RuntimeClientServer } from './client-server.js';
import type { RuntimeMeshes } from './meshes.js';
import { toSubmission } from './submission.js';

/**
 * A call to a ChannelName, on whichever send path serves it here: the RouteMesh the channel is a
 * member of, else the ClientServer Client. `NotConfigured` when the channel is served here without a
 * Client role, `NotFound` when this process has never heard of it.
 */
export function submitToChannel(
  call: CallSubmission,
  channel: string,
  paths: { readonly clientServer: RuntimeClientServer; readonly meshes: RuntimeMeshes },
  options: NormalizedOptions,
  tracing: TracePropagation | undefined,
): Promise<unknown> {
  const client = paths.clientServer.client(channel);
  const mesh = paths.meshes.forChannel(channel);
  if (!client && !mesh) {
    if (options.clientServer.has(channel)) {
      throw new ZLinkError('NotConfigured', `channel '${channel}' has no Client role in this process`);
    }
    throw new ZLinkError('NotFound', `ChannelName '${channel}' is not registered in this process`);
  }
  const submit = toSubmission(call, options.requestTimeoutMs, tracing);
  if (mesh) {
    if (call.kind === 'send') return mesh.calls.sendToChannel(channel, submit);
    return mesh.calls.requestToChannel(channel, submit, `request ${channel}/${call.packet}`);
  }
  if (call.kind === 'send') return client!.send(submit);
  return client!.request(submit, `request ${channel}/${call.packet}`);
}
