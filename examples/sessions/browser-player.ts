// A player in a browser — an HTML5 game, or the page of a Unity WebGL build — on the same session wire as
// the Node client, over the page's own WebSocket. A bundler (Vite, webpack, esbuild, Rollup) resolves the
// import below to the package's browser entry and msgpackr's browser build; without a bundler, an import
// map does (docs/sessions.md#in-a-browser). test/e2e/browser-client.spec.ts runs this file in Chromium.
import { ZLinkSessionClient } from 'nestjs-zlink/session-client/browser';

// `endpoint` is a gateway's websocket listener (`wss://game.example.com/play`; the gateway lists its
// endpoints with `runtime.sessions.endpoints('players')`), `ticket` what the game's login gave the player;
// `show` puts a line on the screen.
export async function joinGame(
  endpoint: string,
  ticket: string,
  show: (line: string) => void,
): Promise<ZLinkSessionClient> {
  const client = new ZLinkSessionClient({
    endpoint,
    token: ticket,
    reconnect: { initialMs: 250, maxMs: 5000 },
  });
  client.on('push', (packet, msg) => show(`${packet}: ${JSON.stringify(msg)}`));
  client.on('close', ({ reason, by }) => show(`closed: ${reason} (by the ${by})`));
  client.on('reconnecting', (delayMs) => show(`reconnecting in ${delayMs} ms`));
  const { sessionId } = await client.connect();
  show(`joined as session ${sessionId}`);
  show(`move: ${JSON.stringify(await client.request('move', { dx: 3 }))}`);
  return client;
}
