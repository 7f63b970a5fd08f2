/**
 * Soak (issue 9, item 3): many requests through one ClientServer client/server pair over real
 * sockets (two runtimes in this process, the client reaching the server over TCP on 127.0.0.1),
 * with a bounded window in flight.
 *
 * Size: `ZLINK_SOAK_REQUESTS` (default 300000, the CI size; `npm run soak` runs 10⁶), after a
 * warm-up of a tenth of that (at most 20000). The heap after GC is sampled after the warm-up and
 * after every tenth of the run (every 10⁵ at 10⁶); the curve is printed.
 *
 * Checked: every request ended with exactly one result and it was its own reply (no error, no
 * late or unmatched reply, nothing pending, the server ran the handler once per request); heap
 * after GC grew less than 10% from the first sample to the last.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ZLinkRuntime } from '../../lib/runtime/index.js';
import { Cleanup } from '../helpers/index.js';
import { heapAfterGc, mb } from '../helpers/heap.js';

const TOTAL = Number(process.env.ZLINK_SOAK_REQUESTS ?? 300000);
const WARMUP = Math.min(20000, Math.max(1000, Math.round(TOTAL / 10)));
const SAMPLES = 10;
const WINDOW = 256;
/** Generous: 5k requests/s would be far below what this box does even when loaded. */
const TIMEOUT_MS = 60000 + (TOTAL + WARMUP) * 0.2;
const MAX_GROWTH = 0.1;

const CHANNEL = 'soak';
const listen = { port: 0, bindHost: '127.0.0.1' } as const;
/** About the bench's ~100-byte payload. */
const PAD = 'x'.repeat(80);

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

interface Tally {
  replies: number;
  wrong: number;
  errors: number;
  firstError: unknown;
}

describe('soak: one ClientServer client/server pair', () => {
  it(
    `${TOTAL} requests, ${WINDOW} in flight: each ends once with its own reply, heap after GC grows < 10%`,
    async () => {
      const server = cleanup.add(new ZLinkRuntime({ clientServer: { [CHANNEL]: { server: { listen } } } }));
      server.registerChannelHandler({
        channel: CHANNEL,
        kind: 'request',
        packet: 'echo',
        handler: (p: unknown) => p,
        source: 'soak',
      });
      await server.start();
      const client = cleanup.add(
        new ZLinkRuntime({
          clientServer: { [CHANNEL]: { client: { connect: [server.localEndpoint(CHANNEL) as string] } } },
          requestTimeoutMs: 30000,
        }),
      );
      await client.start();
      await client.waitForCandidates(CHANNEL, 1, 5000);

      const tally: Tally = { replies: 0, wrong: 0, errors: 0, firstError: undefined };
      let issued = 0;
      /** `count` requests numbered from `issued`, at most WINDOW in flight; each checks its own reply. */
      const run = async (count: number): Promise<void> => {
        const end = issued + count;
        const lane = async (): Promise<void> => {
          while (issued < end) {
            const i = issued++;
            try {
              const reply = (await client.routeClient
                .requestToChannel(CHANNEL, 'echo', { i, s: PAD })
                .async()) as { i?: unknown; s?: unknown };
              if (reply?.i === i && reply.s === PAD) tally.replies++;
              else tally.wrong++;
            } catch (error) {
              tally.errors++;
              tally.firstError ??= error;
            }
          }
        };
        await Promise.all(Array.from({ length: WINDOW }, lane));
      };

      const started = Date.now();
      await run(WARMUP);
      const curve = [await heapAfterGc()];
      const segment = Math.ceil(TOTAL / SAMPLES);
      const marks: number[] = [];
      for (let done = 0; done < TOTAL; done += segment) {
        await run(Math.min(segment, TOTAL - done));
        curve.push(await heapAfterGc());
        marks.push(issued - WARMUP);
      }
      const ms = Date.now() - started;

      const first = curve[0] as number;
      const last = curve.at(-1) as number;
      const growth = (last - first) / first;
      process.stdout.write(
        `soak: ${TOTAL} requests (+${WARMUP} warm-up), ${WINDOW} in flight, in ${ms} ms ` +
          `(${Math.round(((TOTAL + WARMUP) / ms) * 1000)} req/s); heap after GC (MB) at 0` +
          marks.map((m, k) => ` | ${m}: ${mb(curve[k + 1] as number)}`).join('') +
          ` (start ${mb(first)}); growth ${(growth * 100).toFixed(2)}% ` +
          `(${Math.round((last - first) / TOTAL)} B/request); replies ${tally.replies}, wrong ${tally.wrong}, errors ${tally.errors}\n`,
      );

      expect(tally.firstError).toBeUndefined();
      expect({ wrong: tally.wrong, errors: tally.errors, replies: tally.replies }).toEqual({
        wrong: 0,
        errors: 0,
        replies: TOTAL + WARMUP,
      });
      const snapshot = client.snapshot();
      expect({ pending: snapshot.pendingRequests, late: snapshot.lateReplies }).toEqual({
        pending: 0,
        late: 0,
      });
      const served = server.metrics().scopes.find((s) => s.channel === CHANNEL);
      expect(served?.deliveries).toEqual({ ok: TOTAL + WARMUP });
      const called = client.metrics().scopes.find((s) => s.channel === CHANNEL);
      expect(called?.outcomes).toEqual({ reply: TOTAL + WARMUP });
      expect(growth).toBeLessThan(MAX_GROWTH);
    },
    TIMEOUT_MS,
  );
});
