import { type Options, Packr } from 'msgpackr';

/**
 * The one msgpack codec of every record and payload. `variableMapSize`: a map gets its shortest header
 * (a fixmap up to 15 entries, as docs/sessions-wire.md shows), not msgpackr's default map 16 written
 * before the entries are counted — 2 bytes less per map, in every payload a node or a session sends.
 * The session clients pack with it too, a browser's included: msgpackr's browser build needs no Buffer
 * (it falls back to Uint8Array and TextEncoder/TextDecoder).
 *
 * `int64AsType: 'auto'`: msgpack's 64-bit integer forms are read as a number while the value is exact
 * in one (±2^53), a `BigInt` only past that. Many msgpack libraries (Python's, most C# ones) write any
 * integer past 32 bits in a 64-bit form: a millisecond timestamp from such a client would otherwise reach
 * the handler as a `BigInt`, and `Date.now() - ts` would throw (docs/decisions.md#64-bit-integers-read-as-numbers).
 */
export const packr = new Packr({
  useRecords: false,
  moreTypes: false,
  mapsAsObjects: true,
  variableMapSize: true,
  // msgpackr reads 'auto' (unpack.js) but its types list only the other three.
  int64AsType: 'auto' as Options['int64AsType'],
});
