import { configurationError } from '../core/errors.js';

/** Where the client connects: the listener's endpoint as the server gives it, or its host and port. */
export type SessionAddress =
  | { readonly endpoint: string; readonly host?: never; readonly port?: never }
  | { readonly host: string; readonly port: number; readonly endpoint?: never };

/** `tcp://host:port` or `tcp://[v6 address]:port`, as `runtime.sessions.endpoint()` returns it. */
const TCP_ENDPOINT = /^tcp:\/\/(?:\[([0-9a-fA-F:.]+)\]|([^\s:/[\]]+)):(\d{1,5})$/;

/**
 * The host and port to connect to, checked once when the client is made: a malformed endpoint, a
 * missing host or a port outside 1..65535 is a `Configuration` error naming the field.
 */
export function sessionAddress(address: SessionAddress): { host: string; port: number } {
  if (address.endpoint !== undefined) {
    const match = typeof address.endpoint === 'string' ? TCP_ENDPOINT.exec(address.endpoint) : null;
    const port = Number(match?.[3]);
    if (!match || port < 1 || port > 65535)
      throw configurationError(
        'endpoint',
        `expected the listener's endpoint, tcp://host:port (port 1..65535), got ${JSON.stringify(address.endpoint)}`,
      );
    return { host: (match[1] ?? match[2]) as string, port };
  }
  const { host, port } = address as { host: unknown; port: unknown };
  if (typeof host !== 'string' || host.length === 0)
    throw configurationError('host', 'give endpoint (tcp://host:port) or host and port');
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
    throw configurationError('port', `must be an integer 1..65535, got ${JSON.stringify(port)}`);
  return { host, port };
}
