import { Buffer } from 'node:buffer';
import { isIPv4 } from 'node:net';
import { V2_SIGNATURE } from '../../lib/transport/address/index.js';
import { parseIPv4, parseIPv6 } from '../../lib/core/options/index.js';

/**
 * PROXY protocol headers as a load balancer writes them (HAProxy's `send-proxy` and `send-proxy-v2`,
 * AWS NLB's proxy protocol v2), and the raw pieces of a v2 header for a test that writes a broken one.
 */

/** A v2 header: the signature, version/command, family/transport, the block's length, the block, then `tail`. */
export function v2Header(verCmd: number, famProto: number, block: Buffer, tail = Buffer.alloc(0)): Buffer {
  const fixed = Buffer.alloc(4);
  fixed[0] = verCmd;
  fixed[1] = famProto;
  fixed.writeUInt16BE(block.length, 2);
  return Buffer.concat([V2_SIGNATURE, fixed, block, tail]);
}

/** A v2 INET address block: source and destination addresses, then their ports. */
export function ipv4Block(src: number[], dst: number[], sport: number, dport: number): Buffer {
  const b = Buffer.alloc(12);
  b.set(src, 0);
  b.set(dst, 4);
  b.writeUInt16BE(sport, 8);
  b.writeUInt16BE(dport, 10);
  return b;
}

export interface Endpoint {
  readonly address: string;
  readonly port: number;
}

const SERVER: Endpoint = { address: '127.0.0.1', port: 443 };

/** `PROXY TCP4|TCP6 client server cport sport\r\n`, as HAProxy's `send-proxy` writes it. */
export function proxyV1(client: Endpoint, server: Endpoint = SERVER): Buffer {
  const family = isIPv4(client.address) ? 'TCP4' : 'TCP6';
  return Buffer.from(
    `PROXY ${family} ${client.address} ${server.address} ${client.port} ${server.port}\r\n`,
    'latin1',
  );
}

/**
 * A v2 PROXY header for a TCP connection from `client` (INET or INET6, by the address), as
 * `send-proxy-v2` and AWS NLB write it; `tlvs` (raw bytes) after the address block, inside its length.
 */
export function proxyV2(client: Endpoint, server: Endpoint = SERVER, tlvs = Buffer.alloc(0)): Buffer {
  if (isIPv4(client.address)) {
    const block = ipv4Block(
      [...(parseIPv4(client.address) as Uint8Array)],
      [...(parseIPv4(server.address) as Uint8Array)],
      client.port,
      server.port,
    );
    return v2Header(0x21, 0x11, Buffer.concat([block, tlvs]));
  }
  const block = Buffer.alloc(36);
  block.set(parseIPv6(client.address) as Uint8Array, 0);
  block.set(parseIPv6(isIPv4(server.address) ? '::1' : server.address) as Uint8Array, 16);
  block.writeUInt16BE(client.port, 32);
  block.writeUInt16BE(server.port, 34);
  return v2Header(0x21, 0x21, Buffer.concat([block, tlvs]));
}

/** A v2 LOCAL header (a load balancer's own health check): the connection's own peer stands. */
export function proxyV2Local(): Buffer {
  return v2Header(0x20, 0x00, Buffer.alloc(0));
}
