// A player's session over WebSocket, written as a browser page writes it, with the page's own
// WebSocket and a msgpack library: one binary message per frame, each a msgpack array as
// docs/sessions-wire.md lists them. Here the `ws` package stands in for the browser's WebSocket (it
// has the same API), so a test can run this file against a listener. `play` says Hello with a token,
// sends one Request once welcomed, resolves with its Reply and says goodbye.
import { Packr } from 'msgpackr';
import WebSocket from 'ws';

export function play(url: string, token: string): Promise<unknown> {
  const msgpack = new Packr({ useRecords: false, mapsAsObjects: true });
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url); // wss://play.example.com/game
    socket.binaryType = 'arraybuffer';
    socket.onopen = () => socket.send(msgpack.pack([1, 1, token])); // Hello
    socket.onmessage = (event) => {
      const frame = msgpack.unpack(new Uint8Array(event.data as ArrayBuffer)) as unknown[];
      if (frame[0] === 2) socket.send(msgpack.pack([3, 1, 'echo', { hi: 'there' }])); // Welcome
      if (frame[0] === 4) {
        resolve(frame[2]); // the Reply to correlation 1
        socket.send(msgpack.pack([10, 1000, 'bye'])); // Close, then the WebSocket's close
        socket.close(1000);
      }
      if (frame[0] === 10) reject(new Error(`session closed ${String(frame[1])}: ${String(frame[2])}`));
    };
    socket.onclose = (event) => reject(new Error(`WebSocket closed ${event.code} ${event.reason}`));
  });
}
