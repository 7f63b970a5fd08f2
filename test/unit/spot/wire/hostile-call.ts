import { RecordKind, encodePayload } from '../../../../lib/core/index.js';
import type { ObjectRouteFences } from '../../../../lib/spot/wire/index.js';

/**
 * A peer's object send to spot 'room-1' on the route `fences`, whose bytes read one way to msgpackr
 * and another to a plain walk: a record definition (ext 0x72) inside the fences carries a second set
 * of fields, and a string bundle (ext 0x62) in the trace makes msgpackr skip to the end. msgpackr
 * reads operation 'op-1', packet 'chat', payload 'A', hops 1; cut at the boundaries a plain walk
 * finds, the same bytes would read as the hidden operation 'EVIL' with hop count 0.
 */
export function hostileExtSend(fences: ObjectRouteFences): Buffer {
  const p = (v: unknown): Buffer => Buffer.from(encodePayload(v));
  const bin = (text: string): Buffer => Buffer.concat([Buffer.from([0xc4, text.length]), Buffer.from(text)]);
  const build = (bundleAt: number): Buffer => {
    const generations = [p(fences.objectGeneration), p(1), p(1)];
    const hidden = [p('EVIL'), p('evil'), Buffer.from([0xc0]), bin('E')];
    const bundle = Buffer.from([0xd6, 0x62, ...[24, 16, 8, 0].map((s) => (bundleAt >>> s) & 0xff)]);
    const trace = Buffer.concat([Buffer.from([0x81]), p('x'), bundle, Buffer.from([0x00])]);
    return Buffer.concat([
      Buffer.from([0x9b, 0x01, RecordKind.ObjectSend]),
      p('spot'),
      p('room-1'),
      Buffer.from([0x97]),
      p(fences.owner.rid),
      p(fences.owner.nodeGeneration),
      ...generations,
      Buffer.from([0xd4, 0x72, 0x00, 0x95]),
      ...['a', 'b', 'c', 'd', 'e'].map(p),
      ...hidden,
      trace,
      Buffer.from([0x00]),
      p('op-1'),
      p('chat'),
      Buffer.from([0xc0]),
      bin('A'),
      Buffer.from([0xc0, 0x01, 0xa0, 0xa0]),
    ]);
  };
  const first = build(0);
  return build(first.length - 2 - (first.indexOf(Buffer.from([0xd6, 0x62])) + 2));
}
