import { Packr } from 'msgpackr';

/**
 * The payload every workload sends: an order of about 100 bytes in msgpack (the same Packr
 * settings as ZLink's wire, so raw zeromq and ZLink encode it identically).
 */
export const PAYLOAD = Object.freeze({
  orderId: 'order-000123',
  amount: 1234.5,
  currency: 'KRW',
  items: [{ sku: 'sku-1001', qty: 2 }],
  tenant: 'tenant-acme',
});

export type Payload = typeof PAYLOAD;

/** Plain msgpack (maps, no record extension): what the raw zeromq systems put on the wire. */
export const packr = new Packr({
  useRecords: false,
  moreTypes: false,
  mapsAsObjects: true,
  variableMapSize: true,
});

/** The msgpack size of `PAYLOAD`; throws unless it is about 100 bytes (90..110). */
export function payloadSize(): { msgpack: number; json: number } {
  const msgpack = packr.pack(PAYLOAD).length;
  if (msgpack < 90 || msgpack > 110) throw new Error(`payload is ${msgpack} bytes in msgpack, expected ~100`);
  return { msgpack, json: JSON.stringify(PAYLOAD).length };
}
