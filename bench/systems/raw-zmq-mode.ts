import { packr } from '../workload/payload.js';
import type { SendMode } from '../workload/send-queue.js';

/** The raw system's mode, from the first command-line argument (`single` or `batched`). */
export function rawMode(): SendMode {
  const mode = process.argv[2];
  if (mode !== 'single' && mode !== 'batched') throw new Error(`mode must be single or batched, got ${mode}`);
  return mode;
}

/**
 * Whether the payload travels as ZLink's does (second argument `framed`): encoded on its own and
 * carried as one `bin` inside the record, decoded on its own at the other end — the envelope a
 * framework needs so relays never re-encode a payload and a bad one fails only its own call. Without
 * it the payload is packed inline with the record, in one pass each way.
 */
export function rawFramed(): boolean {
  return process.argv[3] === 'framed';
}

/** The records of one zeromq frame: one value (`single`), or every value back to back (`batched`). */
export function unpackFrame(mode: SendMode, frame: Buffer): unknown[] {
  return mode === 'single' ? [packr.unpack(frame)] : (packr.unpackMultiple(frame) as unknown[]);
}
