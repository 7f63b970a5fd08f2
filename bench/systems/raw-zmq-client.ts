/**
 * Raw zeromq.js DEALER client: `[id, payload]` records correlated by id.
 * Usage: BENCH_ENDPOINT=tcp://... node raw-zmq-client.js single|batched [framed]
 */
import { Dealer } from 'zeromq';
import { packr } from '../workload/payload.js';
import { RAW_ONE_WAY } from '../workload/protocol.js';
import { SendQueue } from '../workload/send-queue.js';
import { clientProcess } from './harness.js';
import { rawFramed, rawMode, unpackFrame } from './raw-zmq-mode.js';

/** How long a send blocked at the high-water mark waits before it is written again, as ZLink's DEALER. */
const RAW_SEND_RECHECK_MS = 200;

clientProcess(async (endpoint) => {
  const mode = rawMode();
  // Framed: the payload is a record of its own inside the record (see `rawFramed`).
  const framed = rawFramed();
  const wrap = (body: unknown): unknown => (framed ? packr.pack(body) : body);
  const unwrap = (body: unknown): unknown => (framed ? packr.unpack(body as Buffer) : body);
  // A blocked send is looked at again after this long (see `SendQueue.write`).
  const dealer = new Dealer({ linger: 0, sendTimeout: RAW_SEND_RECHECK_MS });
  dealer.connect(endpoint);
  const queue = new SendQueue(dealer, mode);
  const pending = new Map<number, (value: unknown) => void>();
  let nextId = 0;
  const call = (id: number, body: unknown): Promise<unknown> =>
    new Promise((resolve) => {
      pending.set(id, resolve);
      void queue.push(packr.pack([id, wrap(body)]));
    });
  const loop = (async () => {
    for (;;) {
      let message: Buffer[];
      try {
        message = await dealer.receive();
      } catch {
        return; // closed
      }
      for (const record of unpackFrame(mode, message[0] as Buffer)) {
        const [id, body] = record as [number, unknown];
        const resolve = pending.get(id);
        if (resolve === undefined) throw new Error(`reply ${id} matches no request`);
        pending.delete(id);
        resolve(unwrap(body));
      }
    }
  })();
  return {
    request: (payload) => call(++nextId, payload),
    send: (payload) => queue.push(packr.pack([RAW_ONE_WAY, wrap(payload)])),
    count: () => call(-++nextId, null) as Promise<number>,
    async close() {
      queue.close();
      dealer.close();
      await loop;
    },
  };
});
