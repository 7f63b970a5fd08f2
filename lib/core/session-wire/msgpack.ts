import { Packr } from 'msgpackr';

/**
 * The one msgpack codec of every record and payload. `variableMapSize`: a map gets its shortest header
 * (a fixmap up to 15 entries, as docs/sessions-wire.md shows), not msgpackr's default map 16 written
 * before the entries are counted — 2 bytes less per map, in every payload a node or a session sends.
 * The session clients pack with it too, a browser's included: msgpackr's browser build needs no Buffer
 * (it falls back to Uint8Array and TextEncoder/TextDecoder).
 */
export const packr = new Packr({
  useRecords: false,
  moreTypes: false,
  mapsAsObjects: true,
  variableMapSize: true,
});
