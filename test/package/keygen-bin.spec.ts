/**
 * The package's bin in a checkout (issue 27): `npm run build` leaves `dist/runtime/cli.js` executable,
 * so `npx nestjs-zlink keygen` keeps working after a rebuild (npx links the checkout's bin once).
 */
import { describe, expect, it } from '@jest/globals';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, runOk } from './consumer-apps.js';

describe('the keygen bin in a checkout', () => {
  it('is executable after every build: npx runs it from the checkout after a rebuild, not only the first time', async () => {
    // npx links the checkout's bin once; a build that wrote cli.js without its mode broke every later run.
    for (let build = 0; build < 2; build++) {
      await runOk('npm', ['run', 'build'], REPO, 120000);
      expect(statSync(join(REPO, 'dist/runtime/cli.js')).mode & 0o111).toBe(0o111);
      const { stdout } = await runOk('npx', ['--no-install', 'nestjs-zlink', 'keygen'], REPO, 60000);
      expect(stdout.trim().split('\n')).toEqual([
        expect.stringMatching(/^ZLINK_CURVE_PUBLIC_KEY=.{40}$/),
        expect.stringMatching(/^ZLINK_CURVE_SECRET_KEY=.{40}$/),
      ]);
    }
  }, 300000);
});
