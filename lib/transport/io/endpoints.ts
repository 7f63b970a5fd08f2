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

/** The part of a zeromq socket that binds. */
export interface BindableSocket {
  bind(address: string): Promise<void>;
  readonly lastEndpoint: string | null;
}

/**
 * The addresses of one listening socket: where it binds, and once bound, where other machines and
 * this process reach it. Every listener (server, mesh node, publisher, session listener) keeps one.
 */
export class ListenAddress {
  /** The port bound; 0 until `bind` resolved. */
  private port = 0;

  constructor(
    private readonly listen: {
      readonly bindHost: string;
      readonly advertiseHost: string | undefined;
      readonly port: number;
    },
  ) {}

  /** Binds `socket` to the configured host and port (port 0 picks a free one); rejects when it cannot. */
  async bind(socket: BindableSocket): Promise<void> {
    await socket.bind(bindAddress(this.listen.bindHost, this.listen.port));
    this.port = boundPort(socket.lastEndpoint);
  }

  /** The host and port to bind a socket that is not zeromq's (`node:net`): `'*'` and `[::]` unwrapped. */
  get bindTarget(): { host: string; port: number } {
    const { bindHost, port } = this.listen;
    const host = bindHost === '*' ? '0.0.0.0' : bindHost.replace(/^\[(.*)\]$/, '$1');
    return { host, port };
  }

  /** Records the port a socket that is not zeromq's bound (see `bindTarget`). */
  boundAt(port: number): void {
    this.port = port;
  }

  /** Whether `bind` has resolved: before, both endpoints name port 0. */
  get bound(): boolean {
    return this.port !== 0;
  }

  /** Where other machines connect (see `advertisedEndpoint`). */
  get endpoint(): string {
    return advertisedEndpoint(this.listen.bindHost, this.listen.advertiseHost, this.port);
  }

  /** Where this process connects to its own socket over the real transport (see `loopbackEndpoint`). */
  get local(): string {
    return loopbackEndpoint(this.listen.bindHost, this.port);
  }
}
