/**
 * The floor under the sessions bench's ratio (bench/sessions.ts): the same three processes and the
 * same extra hop with raw zeromq.js and no ZLink at all. `server`: a ROUTER that echoes each message
 * (a batch of length-prefixed records) as it came. `gateway <server endpoint>`: a `node:net` server (the
 * socket the `tcp` session listener runs on) taking a TCP client's bytes and forwarding them to the
 * server on a DEALER in one message per I/O phase, the server's answers written back to the client as
 * they come. `client`: `depth` 100-byte records outstanding,
 * batched per turn, either over plain TCP through the gateway (`via: 'gateway'`) or on a DEALER
 * straight to the server (`via: 'direct'`). What the relayed ÷ direct ratio of these is, no
 * application code can beat on the same machine.
 * Usage: node raw-hop.js server | gateway <endpoint> | client
 */
import { type AddressInfo, type Socket, createServer, connect as tcpConnect } from 'node:net';
import { Dealer, Router } from 'zeromq';
import { emit, onCommands } from '../workload/protocol.js';

interface HopCommand {
  readonly type: 'hop';
  readonly via: 'gateway' | 'direct';
  readonly endpoint: string;
  readonly durationMs: number;
  readonly depth: number;
}

const [role = 'client', serverEndpoint = ''] = process.argv.slice(2);

async function server(): Promise<void> {
  const router = new Router();
  await router.bind('tcp://127.0.0.1:0');
  emit({ type: 'ready', endpoint: router.lastEndpoint });
  for await (const [id, batch] of router) await router.send([id as Buffer, batch as Buffer]);
}

async function gateway(): Promise<void> {
  const dealer = new Dealer();
  dealer.connect(serverEndpoint);
  let client: Socket | undefined;
  let pending: Buffer[] = [];
  // zeromq.js takes one send at a time per socket: they queue behind each other.
  let sending = Promise.resolve();
  const forward = (): void => {
    const batch = Buffer.concat(pending);
    pending = [];
    sending = sending.then(() => dealer.send(batch));
  };
  const server = createServer({ noDelay: true }, (socket) => {
    client = socket;
    socket.on('data', (data: Buffer) => {
      if (pending.push(data) === 1) setImmediate(forward);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  emit({ type: 'ready', endpoint: `tcp://127.0.0.1:${(server.address() as AddressInfo).port}` });
  for await (const [batch] of dealer) client?.write(batch as Buffer);
}

const RECORD = (() => {
  const record = Buffer.alloc(104, 7);
  record.writeUInt32BE(100, 0);
  return record;
})();

async function hop(c: HopCommand): Promise<void> {
  const waiting: (() => void)[] = [];
  let rest: Buffer = Buffer.alloc(0);
  const answered = (chunk: Buffer): void => {
    const buf = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    let at = 0;
    while (at + 4 <= buf.length && at + 4 + buf.readUInt32BE(at) <= buf.length) {
      at += 4 + buf.readUInt32BE(at);
      waiting.shift()?.();
    }
    rest = buf.subarray(at);
  };
  let write: (bytes: Buffer) => void;
  let close: () => void;
  if (c.via === 'gateway') {
    const [host, port] = c.endpoint.replace('tcp://', '').split(':');
    const socket = tcpConnect({ host, port: Number(port) });
    socket.setNoDelay(true);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('data', answered);
    write = (bytes) => void socket.write(bytes);
    close = () => socket.destroy();
  } else {
    const dealer = new Dealer();
    dealer.connect(c.endpoint);
    void (async () => {
      for await (const [batch] of dealer) answered(batch as Buffer);
    })();
    let sending = Promise.resolve();
    write = (bytes) => void (sending = sending.then(() => dealer.send(bytes)));
    close = () => dealer.close();
  }
  let out: Buffer[] = [];
  const request = (): Promise<void> =>
    new Promise((resolve) => {
      waiting.push(resolve);
      if (out.push(RECORD) === 1)
        queueMicrotask(() => {
          const batch = Buffer.concat(out);
          out = [];
          write(batch);
        });
    });
  let count = 0;
  const t0 = performance.now();
  const end = t0 + c.durationMs;
  const lane = async (): Promise<void> => {
    while (performance.now() < end) {
      await request();
      count++;
    }
  };
  await Promise.all(Array.from({ length: c.depth }, lane));
  const elapsed = performance.now() - t0;
  close();
  emit({ type: 'hop-result', result: { perSec: (count * 1000) / elapsed, count, failed: 0 } });
}

if (role === 'server') void server();
else if (role === 'gateway') void gateway();
else {
  onCommands(
    async (command) => hop(command as unknown as HopCommand),
    async () => undefined,
  );
  emit({ type: 'ready' });
}
if (role !== 'client') process.stdin.on('end', () => process.exit(0)).resume();
