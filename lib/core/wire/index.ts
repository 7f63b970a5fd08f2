/**
 * The wire: the codec, the frames and records of calls, the mesh and fanout, metadata and framework fields.
 */
export * from './metadata.js';
export * from './wire.js';
export * from './mesh-records.js';
export * from './fanout-records.js';
export * from './framework-fields.js';
export * from './encoded-call.js';
// A payload handed on as its bytes (a session relay's reply).
export { passPayload } from './payload.js';
// The field checks every reader of a record uses (a name, a count), for readers outside core too.
export { isCount, isName } from './codec.js';
// The record toolkit the object layer's own records (lib/spot/wire) are written with.
export {
  MAX_UINT32,
  isBytes,
  isCorrelation,
  isMetadata,
  isObjectKind,
  isStr,
  packr,
  strBytes,
} from './codec.js';
export { MsgpackReader } from './msgpack-read.js';
export { countMsgpackValues, msgpackValueEnd } from './msgpack-scan.js';
export * as msgpackWrite from './msgpack-write.js';
// The end-user session wire (docs/sessions-wire.md): its base (codec, framing, kinds, close codes; no
// Node built-ins) and the server's frame reader and writers.
export * from '../session-wire/index.js';
export * from './session-frames.js';
