import { hostname } from 'node:os';

const WILDCARDS = new Set(['0.0.0.0', '*', '::', '[::]']);

function hostPart(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export function bindAddress(bindHost: string, port: number): string {
  const host = bindHost === '*' ? '0.0.0.0' : bindHost;
  return `tcp://${hostPart(host)}:${port === 0 ? '*' : port}`;
}

/** The port zeromq actually bound (`lastEndpoint` is `tcp://host:port`). */
export function boundPort(lastEndpoint: string | null): number {
  const match = /:(\d+)$/.exec(lastEndpoint ?? '');
  if (!match) throw new Error(`cannot read the bound port from ${String(lastEndpoint)}`);
  return Number(match[1]);
}

/** Where other machines reach a listener: the advertise host, else the bind host, else our hostname. */
export function advertisedEndpoint(
  bindHost: string,
  advertiseHost: string | undefined,
  port: number,
): string {
  const host = advertiseHost ?? (WILDCARDS.has(bindHost) ? hostname() : bindHost);
  return `tcp://${hostPart(host)}:${port}`;
}

/** Where this process reaches its own listener (the local server is reached over the real transport). */
export function loopbackEndpoint(bindHost: string, port: number): string {
  if (bindHost === '::' || bindHost === '[::]') return `tcp://[::1]:${port}`;
  return `tcp://${WILDCARDS.has(bindHost) ? '127.0.0.1' : hostPart(bindHost)}:${port}`;
}
