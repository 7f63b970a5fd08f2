/**
 * The RouteMesh part of `npm run demo`: three game nodes as three processes. play-a calls; play-b
 * and play-c serve `match`. Shows Node direct landing on the named node, select-one splitting
 * `match` 1:1, a runtime weight change to 0 moving everything to the other server, and 100 bringing
 * it back.
 */
import { LineChild, type Start, booting } from '../demo-child.js';

/**
 * Starts the three nodes at once, so that they boot while the parts before this one run; `run()`
 * then plays this part.
 */
export function startMesh(start: Start): { run(): Promise<void> } {
  const node = (...args: string[]) =>
    new LineChild(args[0] as string, start('../game-mesh/game-node.js', args));
  const b = node('play-b', 'server');
  const c = node('play-c', 'server');
  const ready = booting(
    Promise.all([b.next(), c.next()]).then(async ([readyB, readyC]) => {
      const a = node('play-a', 'client', readyB.endpoint, readyC.endpoint);
      await a.next();
      return { a, endpoints: [readyB.endpoint as string, readyC.endpoint as string] };
    }),
  );
  return {
    run: async () => {
      const { a, endpoints } = await ready;
      await a.ask({ type: 'wait', candidates: 2 });
      console.log(`mesh 'game': play-a peers with play-b (${endpoints[0]}) and play-c (${endpoints[1]})`);

      const direct = await a.ask({ type: 'ping', to: 'play-c', n: 300 });
      console.log(`300 Node direct requests to play-c: ${JSON.stringify(direct.counts)}`);
      const even = await a.ask({ type: 'join', n: 1000 });
      console.log(`1000 'match' requests, weights 100/100: ${JSON.stringify(even.counts)}`);

      await b.ask({ type: 'weight', weight: 0 });
      await a.ask({ type: 'wait', candidates: 1 }); // the change reaches play-a as a control record
      const moved = await a.ask({ type: 'join', n: 500 });
      console.log(`play-b set to weight 0 at run time; 500 more: ${JSON.stringify(moved.counts)}`);

      await b.ask({ type: 'weight', weight: 100 });
      await a.ask({ type: 'wait', candidates: 2 });
      const back = await a.ask({ type: 'join', n: 500 });
      console.log(`play-b back to 100; 500 more: ${JSON.stringify(back.counts)}`);
    },
  };
}
