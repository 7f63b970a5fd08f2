/**
 * The floor under the relocation bench's follow hop (bench/relocation.ts): the same three processes and
 * the same extra crossing with raw zeromq.js and no ZLink. `server <caller endpoint>` (B): a ROUTER
 * that answers every request on its own DEALER to the caller's ROUTER, as a relayed call's answer goes
 * straight to its origin. `relay <server endpoint>` (A): a ROUTER that passes each request on to B
 * unread — or answers it itself when it is a warm-up ping. `caller`: its ROUTER for B's answers, a DEALER
 * to each; sampled as the ZLink client samples its hop: between samples a call every millisecond to
 * each of A and B keeps the three processes awake, then one request through A (the detour) and one
 * straight to B (direct), one at a time. What the detour costs over direct here, no relay can beat on
 * the same machine.
 * Usage: node raw-follow.js caller | server <caller endpoint> | relay <server endpoint>
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Dealer, Router } from 'zeromq';
import { PAYLOAD, packr } from '../workload/payload.js';
import { emit, onCommands } from '../workload/protocol.js';
import { median } from '../workload/stats.js';

/** Runner → caller: sample the hop `samples` times through relay `relay` to server `server`. */
export interface RawFollowCommand {
  readonly type: 'raw-follow';
  readonly relay: string;
  readonly server: string;
  readonly samples: number;
}

const WARM = 1;
const [role = 'caller', peer = ''] = process.argv.slice(2);

/** A ROUTER bound here and a DEALER to `peer`; says it is ready with the ROUTER's endpoint. */
async function routerAndDealerTo(): Promise<{ router: Router; dealer: Dealer }> {
  const router = new Router();
  await router.bind('tcp://127.0.0.1:0');
  const dealer = new Dealer();
  dealer.connect(peer);
  emit({ type: 'ready', endpoint: router.lastEndpoint });
  return { router, dealer };
}

async function server(): Promise<void> {
  const { router, dealer: toCaller } = await routerAndDealerTo();
  for await (const [, body] of router) {
    const [, n, payload] = packr.unpack(body as Buffer) as [number, number, unknown];
    await toCaller.send(packr.pack([n, payload]));
  }
}

async function relay(): Promise<void> {
  const { router, dealer: toServer } = await routerAndDealerTo();
  for await (const [id, body] of router) {
    // Only the warm-up mark is read (the first item, one byte after the array's); a request goes on as it came.
    if ((body as Buffer)[1] === WARM) await router.send([id as Buffer, body as Buffer]);
    else await toServer.send(body as Buffer);
  }
}

async function caller(): Promise<void> {
  const replies = new Router();
  await replies.bind('tcp://127.0.0.1:0');
  const waiting = new Map<number, () => void>();
  const answered = (body: Buffer): void => {
    // B answers [n, payload]; A answers a warm-up ping as it came, [kind, n, payload].
    const v = packr.unpack(body) as unknown[];
    const n = (v.length === 3 ? v[1] : v[0]) as number;
    waiting.get(n)?.();
    waiting.delete(n);
  };
  void (async () => {
    for await (const [, body] of replies) answered(body as Buffer);
  })();
  let next = 0;
  const sockets = new Map<string, Dealer>();
  const socketTo = (endpoint: string): Dealer => {
    let dealer = sockets.get(endpoint);
    if (!dealer) {
      dealer = new Dealer();
      dealer.connect(endpoint);
      const own = dealer;
      void (async () => {
        for await (const [body] of own) answered(body as Buffer);
      })();
      sockets.set(endpoint, dealer);
    }
    return dealer;
  };
  // One send at a time per socket (zeromq.js refuses overlapping sends): they queue behind each other.
  const sending = new Map<Dealer, Promise<void>>();
  const call = (to: string, kind = 0): Promise<void> =>
    new Promise((resolve) => {
      const n = ++next;
      waiting.set(n, resolve);
      const dealer = socketTo(to);
      const bytes = packr.pack([kind, n, PAYLOAD]);
      sending.set(
        dealer,
        (sending.get(dealer) ?? Promise.resolve()).then(() => dealer.send(bytes)),
      );
    });
  onCommands(
    async (command) => {
      const c = command as unknown as RawFollowCommand;
      const warmGap = async (ms: number): Promise<void> => {
        const until = performance.now() + ms;
        while (performance.now() < until) {
          await Promise.all([call(c.relay, WARM), call(c.server, WARM)]);
          await sleep(1);
        }
      };
      for (let i = 0; i < 200; i++) await Promise.all([call(c.relay), call(c.server)]);
      const detour: number[] = [];
      const direct: number[] = [];
      for (let i = 0; i < c.samples; i++) {
        await warmGap(20);
        let start = performance.now();
        await call(c.relay);
        detour.push((performance.now() - start) * 1000);
        await warmGap(20);
        start = performance.now();
        await call(c.server);
        direct.push((performance.now() - start) * 1000);
      }
      emit({ type: 'raw-follow-result', detourP50Us: median(detour), directP50Us: median(direct) });
    },
    async () => undefined,
  );
  emit({ type: 'ready', endpoint: replies.lastEndpoint });
}

if (role === 'server') void server();
else if (role === 'relay') void relay();
else void caller();
if (role !== 'caller') process.stdin.on('end', () => process.exit(0)).resume();
