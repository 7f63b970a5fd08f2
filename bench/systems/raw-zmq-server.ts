/**
 * Raw zeromq.js ROUTER: echoes `[id, payload]` requests, counts one-way records, answers counts.
 * Usage: node raw-zmq-server.js single|batched [framed]
 */
import { Router } from 'zeromq';
import { packr } from '../workload/payload.js';
import { RAW_ONE_WAY } from '../workload/protocol.js';
import { SendQueue } from '../workload/send-queue.js';
import { serverProcess } from './harness.js';
import { rawFramed, rawMode, unpackFrame } from './raw-zmq-mode.js';

serverProcess(async () => {
  const mode = rawMode();
  const framed = rawFramed();
  const router = new Router({ linger: 0 });
  await router.bind('tcp://127.0.0.1:*');
  const queue = new SendQueue(router, mode);
  let received = 0;
  const loop = (async () => {
    for (;;) {
      let message: Buffer[];
      try {
        message = await router.receive();
      } catch {
        return; // closed
      }
      const from = message[0] as Buffer;
      for (const record of unpackFrame(mode, message[1] as Buffer)) {
        const [id, wire] = record as [number, unknown];
        // Framed, a handler's payload is decoded on its own, as ZLink's is (see `rawFramed`).
        const body = framed ? packr.unpack(wire as Buffer) : wire;
        if (id === RAW_ONE_WAY) received++;
        else {
          const reply = id > 0 ? body : received;
          void queue.push(packr.pack([id, framed ? packr.pack(reply) : reply]), from);
        }
      }
    }
  })();
  return {
    endpoint: router.lastEndpoint as string,
    async close() {
      queue.close();
      router.close();
      await loop;
    },
  };
});
