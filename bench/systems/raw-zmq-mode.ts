import { packr } from '../payload.js';
import type { SendMode } from '../send-queue.js';

/** The raw system's mode, from the first command-line argument (`single` or `batched`). */
export function rawMode(): SendMode {
  const mode = process.argv[2];
  if (mode !== 'single' && mode !== 'batched') throw new Error(`mode must be single or batched, got ${mode}`);
  return mode;
}

/** The records of one zeromq frame: one value (`single`), or every value back to back (`batched`). */
export function unpackFrame(mode: SendMode, frame: Buffer): unknown[] {
  return mode === 'single' ? [packr.unpack(frame)] : (packr.unpackMultiple(frame) as unknown[]);
}
