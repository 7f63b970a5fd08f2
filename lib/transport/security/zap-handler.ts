import type { Router } from 'zeromq';
import { z85Encode } from '../../core/curve-keys.js';
import { zapRouter } from '../io/index.js';
import { BIND_RETRY_MS } from '../timing.js';

/**
 * ZeroMQ's authentication hook (ZAP, RFC 27) for this process: libzmq asks it, for every connection a
 * CURVE socket accepts, whether the client's public key may connect. There is one per process (it
 * lives at a fixed inproc endpoint of zeromq's one context), so each socket names its owner in its
 * ZAP domain and the answer comes from that owner's `check`. A domain nobody registered is refused.
 */

const ZAP_ENDPOINT = 'inproc://zeromq.zap.01';
const ZAP_VERSION = '1.0';

/** Decides one connection: the client's key (Z85) and its address; `true` admits it. */
export type ZapCheck = (publicKey: string, address: string) => boolean;

let router: Router | undefined;
/** The handler's bind: a registration made while another is binding waits for the same one. */
let bound: Promise<void> | undefined;
let serving: Promise<void> | undefined;
const checks = new Map<string, ZapCheck>();

/**
 * Registers `check` for sockets whose `zapDomain` is `domain`; resolves with the function that
 * unregisters it (the handler closes with the last one). Binds the handler on first use.
 */
export async function registerZap(domain: string, check: ZapCheck): Promise<() => Promise<void>> {
  checks.set(domain, check);
  if (router === undefined) {
    const r = zapRouter();
    router = r;
    bound = bindHandler(r).then(
      () => void (serving = serve(r)),
      (error: unknown) => {
        // The next registration starts over instead of waiting on this failure forever.
        if (router === r) router = undefined;
        r.close();
        throw error;
      },
    );
  }
  await bound;
  return async () => {
    if (checks.get(domain) !== check) return;
    checks.delete(domain);
    if (checks.size > 0 || router === undefined) return;
    const r = router;
    router = undefined;
    r.close();
    await serving;
  };
}

/** Binds attempts at most; about a second of waiting in all. */
const BIND_ATTEMPTS = 50;

/**
 * Binds the handler's endpoint. A handler closed with its last registration leaves the inproc name
 * to libzmq's reaper, which frees it a little later (longer on a busy machine): a new registration
 * meanwhile finds it taken (EADDRINUSE) and waits for it.
 */
async function bindHandler(r: Router): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await r.bind(ZAP_ENDPOINT);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EADDRINUSE' || attempt >= BIND_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, BIND_RETRY_MS));
    }
  }
}

async function serve(r: Router): Promise<void> {
  try {
    for await (const frames of r) {
      // [routing id, empty, version, request id, domain, address, identity, mechanism, credentials...]
      const [id, empty, version, requestId, domain, address, , mechanism, credential] = frames;
      if (!id || !empty || !requestId) continue;
      let ok = false;
      if (
        version?.toString() === ZAP_VERSION &&
        mechanism?.toString() === 'CURVE' &&
        credential?.length === 32
      ) {
        const check = checks.get(domain?.toString() ?? '');
        try {
          ok = check?.(z85Encode(credential), address?.toString() ?? '') === true;
        } catch {
          ok = false;
        }
      }
      await r.send([
        id,
        empty,
        ZAP_VERSION,
        requestId,
        ok ? '200' : '400',
        ok ? 'OK' : 'key not allowed',
        '',
        '',
      ]);
    }
  } catch {
    // Closed with the last registration.
  }
}
