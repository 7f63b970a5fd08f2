/**
 * One side of the fanout bench: `--role pub|sub --system zlink|raw [--endpoint E]`. The publisher
 * binds and, on `{type:'run', ms}`, publishes the bench payload as fast as it can in bursts of 1000
 * (yielding to the event loop between bursts) and reports how many; the subscriber counts what it
 * receives and reports on `{type:'count'}`. Raw is zeromq.js PUB→SUB with one msgpack event per
 * message, decoded on receipt — what an application would write by hand.
 */
import { Publisher, Subscriber } from 'zeromq';
import { ZLinkRuntime } from '../../lib/runtime/index.js';
import { PAYLOAD, packr } from '../workload/payload.js';
import { emit, fail, onCommands } from '../workload/protocol.js';

const CHANNEL = 'ticks';
const PACKET = 'tick';
const BURST = 1000;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const role = arg('--role');
const system = arg('--system');

async function publishFor(ms: number, publishBurst: () => Promise<void>): Promise<number> {
  let published = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    await publishBurst();
    published += BURST;
    await new Promise((r) => setImmediate(r));
  }
  return published;
}

async function publisher(): Promise<void> {
  let burst: () => Promise<void>;
  let endpoint: string;
  if (system === 'zlink') {
    const runtime = new ZLinkRuntime({
      fanout: { [CHANNEL]: { publisher: { listen: { bindHost: '127.0.0.1' } } } },
    });
    await runtime.start();
    endpoint = runtime.endpoint(CHANNEL) as string;
    const client = runtime.fanoutClient;
    burst = async () => {
      const calls: Promise<void>[] = [];
      for (let i = 0; i < BURST; i++) calls.push(client.publish(CHANNEL, PACKET, PAYLOAD).async());
      await Promise.all(calls);
    };
  } else {
    const pub = new Publisher({ linger: 0 });
    await pub.bind('tcp://127.0.0.1:0');
    endpoint = pub.lastEndpoint as string;
    const topic = Buffer.from(PACKET);
    burst = async () => {
      for (let i = 0; i < BURST; i++) await pub.send([topic, packr.pack(PAYLOAD)]);
    };
  }
  onCommands(
    async (command) => {
      if (command.type !== 'run') return;
      const published = await publishFor(command.ms as number, burst);
      emit({ type: 'done', published });
    },
    async () => undefined,
  );
  emit({ type: 'ready', endpoint });
}

async function subscriber(endpoint: string): Promise<void> {
  let count = 0;
  /** When the last event ran (the wall clock, shared by the bench's processes). */
  let lastAt = 0;
  let dropped = (): number => 0;
  if (system === 'zlink') {
    const runtime = new ZLinkRuntime({ fanout: { [CHANNEL]: { subscriber: { connect: [endpoint] } } } });
    runtime.registerFanoutHandler({
      channel: CHANNEL,
      kind: 'send',
      packet: PACKET,
      handler: () => {
        count++;
        lastAt = Date.now();
      },
      source: 'bench',
    });
    await runtime.start();
    const link = () => runtime.snapshot().fanout[0]?.subscriber?.publishers[0];
    while (link()?.rid === undefined) await new Promise((r) => setTimeout(r, 10));
    dropped = () => link()?.dropped ?? 0;
  } else {
    const sub = new Subscriber({ linger: 0 });
    sub.subscribe(PACKET);
    sub.connect(endpoint);
    void (async () => {
      for await (const [, body] of sub) {
        packr.unpack(body as Buffer);
        count++;
        lastAt = Date.now();
      }
    })();
  }
  onCommands(
    async (command) => {
      if (command.type === 'count') emit({ type: 'count', count, lastAt, dropped: dropped() });
    },
    async () => undefined,
  );
  emit({ type: 'ready' });
}

(role === 'pub' ? publisher() : subscriber(arg('--endpoint') as string)).catch(fail);
