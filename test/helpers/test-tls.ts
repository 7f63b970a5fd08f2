import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The test CA and the `localhost` server certificates signed by it (test/fixtures/tls, made by its
 * make.sh; test-only keys): `key` and `cert` are what a `tls` or `wss` listener takes, `ca` what a
 * client trusts.
 */
export interface TestTls {
  /** The server's RSA 2048 key and certificate. */
  readonly key: string;
  readonly cert: string;
  /** The same server's ECDSA P-256 key and certificate (docs/sessions.md#what-a-tls-session-costs). */
  readonly ecdsa: { readonly key: string; readonly cert: string };
  readonly ca: string;
  /** The CA's own key: a valid key that is not the server certificate's. */
  readonly caKey: string;
}

let cached: TestTls | undefined;

export function testTls(): TestTls {
  const read = (name: string) =>
    readFileSync(fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url)), 'utf8');
  cached ??= {
    key: read('server.key'),
    cert: read('server.crt'),
    ecdsa: { key: read('ecdsa-server.key'), cert: read('ecdsa-server.crt') },
    ca: read('ca.crt'),
    caKey: read('ca.key'),
  };
  return cached;
}
