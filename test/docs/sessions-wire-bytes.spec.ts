/**
 * docs/sessions-wire.md's example bytes are what the wire carries: each row of its example decodes to
 * the value the row gives, and a live session listener, driven over a real TCP socket with the page's
 * client frames, sends the page's server frames byte for byte (a map as the fixmap the page shows, not
 * as map 16).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { connect, type Socket } from 'node:net';
import { Unpackr } from 'msgpackr';
import type { ZLinkSessionContext } from '../../lib/core/index.js';
import { Cleanup, EventCollector, within } from '../helpers/index.js';
import { gatewayOptions, startGateway } from '../integration/sessions/harness.js';
import { read, sectionOf } from './markdown.js';

interface Row {
  readonly direction: 'c → s' | 's → c';
  readonly name: string;
  readonly bytes: Buffer;
  readonly value: unknown;
}

/** The example's rows: `| c → s Hello | \`00 00 00 06  93 ...\` | \`[1, 1, "t1"]\` |`. */
function exampleRows(): Row[] {
  const rows: Row[] = [];
  for (const line of sectionOf(read('docs/sessions-wire.md'), 'An example').split('\n')) {
    const match = /^\| (c → s|s → c) ([^|]*?) *\| `([0-9a-f ]+)` *\| `([^`]*)` *\|$/.exec(line);
    if (!match) continue;
    const [, direction, name, hex, value] = match as unknown as [
      string,
      Row['direction'],
      string,
      string,
      string,
    ];
    rows.push({
      direction,
      name,
      bytes: Buffer.from(hex.replace(/ /g, ''), 'hex'),
      value: JSON.parse(value),
    });
  }
  return rows;
}

/** The server's frames as they arrive, each with its length prefix, in order. */
class FrameReader {
  private buffer = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private wake: (() => void) | undefined;

  constructor(socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      while (this.buffer.length >= 4 && this.buffer.length >= 4 + this.buffer.readUInt32BE(0)) {
        const end = 4 + this.buffer.readUInt32BE(0);
        this.frames.push(Buffer.from(this.buffer.subarray(0, end)));
        this.buffer = this.buffer.subarray(end);
      }
      this.wake?.();
    });
  }

  async next(): Promise<Buffer> {
    while (this.frames.length === 0) await within(new Promise<void>((r) => (this.wake = r)), 5000, 'a frame');
    return this.frames.shift() as Buffer;
  }
}

const unpackr = new Unpackr({ mapsAsObjects: true });
const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

describe("docs/sessions-wire.md's example", () => {
  const rows = exampleRows();

  it('has client and server frames', () => {
    expect(rows.map((r) => `${r.direction} ${r.name}`)).toEqual(
      expect.arrayContaining(['c → s Hello', 'c → s Request', 's → c Reply']),
    );
  });

  it.each(rows.map((r) => [`${r.direction} ${r.name}`, r] as const))(
    '%s: the length prefix counts the body, which decodes to the value given',
    (_name, { bytes, value }) => {
      expect(bytes.readUInt32BE(0)).toBe(bytes.length - 4);
      expect(unpackr.unpack(bytes.subarray(4))).toEqual(value);
    },
  );

  it('is what a live listener reads and writes, byte for byte, over TCP', async () => {
    const runtime = cleanup.add(
      await startGateway(gatewayOptions(), {
        handlers: {
          echo: {
            fn: (payload, ctx) => {
              (ctx as ZLinkSessionContext).session.push('moved', { x: 3 });
              return payload;
            },
          },
        },
      }),
    );
    const events = cleanup.add(new EventCollector(runtime.events));
    const port = Number((runtime.sessions.localEndpoint('game') as string).split(':').pop());
    const socket = connect({ host: '127.0.0.1', port });
    cleanup.add({ close: () => void socket.destroy() });
    await within(new Promise((r) => socket.once('connect', r)), 5000, 'connect');
    const reader = new FrameReader(socket);
    const closed = new Promise((r) => socket.once('close', r));

    for (const row of rows) {
      if (row.direction === 'c → s') {
        socket.write(row.bytes);
        // The Welcome is not on the page (it carries the session id): it comes, and is one.
        if (row.name === 'Hello')
          expect((unpackr.unpack((await reader.next()).subarray(4)) as unknown[]).slice(0, 2)).toEqual([
            2, 1,
          ]);
      } else expect((await reader.next()).toString('hex')).toBe(row.bytes.toString('hex'));
    }
    // The page's last client frame is a Close: the listener closes the connection, reason normal.
    await within(closed, 5000, 'the connection closed');
    const end = await events.next('session', (e) => e.state === 'closed');
    expect(end).toMatchObject({ reason: 'normal' });
  });
});
