import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zlinkKeyPair } from '../../../lib/core/index.js';
import { keyPairLines } from '../../../lib/runtime/curve-key-files.js';
import { ZLinkRuntime, curveKeysFromEnv, curveKeysFromFile } from '../../../lib/runtime/index.js';

/** Keys out of source control: from the environment or a key file, as `keygen` writes them; bad ones named. */
describe('CURVE keys from the environment and from files', () => {
  it('reads what keygen writes, from a file and from the environment, and the runtime takes it', () => {
    const pair = zlinkKeyPair();
    const dir = mkdtempSync(join(tmpdir(), 'zlink-keys-'));
    const file = join(dir, 'node.env');
    writeFileSync(file, `# node-a\n${keyPairLines(pair)}`);
    expect(curveKeysFromFile(file)).toEqual(pair);
    const env = { ZLINK_CURVE_PUBLIC_KEY: pair.publicKey, ZLINK_CURVE_SECRET_KEY: pair.secretKey };
    expect(curveKeysFromEnv(env)).toEqual(pair);
    expect(curveKeysFromEnv({ A_PUBLIC_KEY: pair.publicKey, A_SECRET_KEY: pair.secretKey }, 'A')).toEqual(
      pair,
    );
    expect(() => new ZLinkRuntime({ security: { curve: curveKeysFromFile(file) } })).not.toThrow();
  });

  it('names what is missing or bad', () => {
    const pair = zlinkKeyPair();
    const fieldOf = (f: () => unknown): unknown => {
      try {
        f();
      } catch (error) {
        return (error as { code: string; details: { field: string } }).details.field;
      }
      return undefined;
    };
    expect(fieldOf(() => curveKeysFromEnv({ ZLINK_CURVE_PUBLIC_KEY: pair.publicKey }))).toBe(
      'ZLINK_CURVE_SECRET_KEY',
    );
    expect(
      fieldOf(() =>
        curveKeysFromEnv({ ZLINK_CURVE_PUBLIC_KEY: 'x', ZLINK_CURVE_SECRET_KEY: pair.secretKey }),
      ),
    ).toBe('ZLINK_CURVE_PUBLIC_KEY');
    expect(fieldOf(() => curveKeysFromFile('/no/such/file'))).toBe('/no/such/file');
  });
});
