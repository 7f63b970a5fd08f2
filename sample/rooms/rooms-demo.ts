/**
 * The Spots part of `npm run demo`: two object servers hosting `@Spot('room')` and a gateway (an
 * Object Client) as three processes on mesh `rooms`. The gateway opens rooms (getOrCreateSpot, or the
 * Instance intent of a first join), players join and chat in them by global id, and a live summary
 * shows the calls; then where the rooms live, whether every room counted every chat line sent to it,
 * two deliberate errors, and every room destroyed. Then players connect over TCP and play in arenas
 * while one moves (./players-demo.ts). Objects keep their records in the Location Store, which the
 * demo always has (it stops at once without redis-server).
 */
import { LineChild, type Start, booting } from '../demo-child.js';
import { playersDemo } from './players-demo.js';

/**
 * Starts the three rooms processes at once, so that they boot while the other parts of the demo run;
 * `run()` then plays this part.
 */
export function startRooms(start: Start): { run(seconds?: number): Promise<void> } {
  const servers = ['rooms-a', 'rooms-b'].map(
    (rid) => new LineChild(rid, start('../rooms/room-server.js', [rid])),
  );
  // The gateway waits for both object servers itself (placement needs them).
  const gateway = new LineChild('rooms-gateway', start('../rooms/room-gateway.js', ['2']));
  const ready = booting(Promise.all([...servers, gateway].map((c) => c.next())));
  return {
    run: async (seconds = 2) => {
      await ready;
      await roomsDemo(servers, gateway, seconds);
      await playersDemo(start, servers, gateway, seconds);
    },
  };
}

async function roomsDemo(servers: LineChild[], gateway: LineChild, seconds: number): Promise<void> {
  console.log("rooms: object servers rooms-a and rooms-b host @Spot('room'); rooms-gateway only calls them");

  const opened = await gateway.ask({ type: 'open', rooms: 8 });
  console.log(
    `  8 rooms: ${opened.explicit} by getOrCreateSpot, ${opened.byInstanceIntent} left to the Instance intent of their first join`,
  );
  gateway.child.stdin!.write(`${JSON.stringify({ type: 'play', seconds, players: 48 })}\n`);
  let played = await gateway.next();
  for (; played.type === 'tick'; played = await gateway.next()) {
    const { calls, errors } = played;
    console.log(
      `  [rooms ${played.t}s] ${calls.started} calls (${calls.requests} requests, ${calls.sends} chat sends), ` +
        `${calls.ended} ended, errors ${JSON.stringify(errors)}`,
    );
  }
  const checked = await gateway.ask({ type: 'check' });
  const stats = await Promise.all(servers.map((s) => s.ask({ type: 'stats' })));
  const sum = (key: string): number => stats.reduce((n, s) => n + Number(s[key]), 0);
  // The Instance-intent rooms land where the first creation won the race, so the split may be uneven.
  console.log(`rooms per server: ${JSON.stringify(checked.placement)}`);
  console.log(
    `rooms turns: ${stats.map((s) => `${s.rid} ${s.handled}`).join(', ')}; activations ${sum('activations')}, ` +
      `deactivations ${sum('deactivations')} for ${opened.explicit + opened.byInstanceIntent} rooms ` +
      '(one each, however many players raced to create a room)',
  );
  console.log(`rooms chat lines: sent ${checked.chatsSent}, counted by the rooms ${checked.chatsCounted}`);
  console.log(
    `rooms deliberate errors: a plain call to room-404 → ${checked.deliberate.plainCallToMissingRoom}, ` +
      `createSpot of an existing room → ${checked.deliberate.createOfExistingRoom}, ` +
      `a call after destroy → ${checked.afterDestroy}`,
  );
  console.log(
    `rooms calls: ${JSON.stringify({ started: checked.calls.started, ended: checked.calls.ended, replies: checked.calls.replies })} errors ${JSON.stringify(checked.errors)}`,
  );
}
