/**
 * The package's bin in a checkout (issue 27): `npm run build` leaves `dist/runtime/cli.js` executable,
 * so `npx nestjs-zlink keygen` keeps working after a rebuild (npx links the checkout's bin once).
 * It builds in a copy of the checkout (package.json, the tsconfigs, lib/ and a link to node_modules),
 * never in the repo's own `dist/`, which the consumer spec packs meanwhile (issue 51: run side by side,
 * this spec deleted it under the other).
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { cpSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, runOk } from './consumer-apps.js';

const checkout = mkdtempSync(join(tmpdir(), 'zlink-keygen-'));
for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'lib']) {
  cpSync(join(REPO, file), join(checkout, file), { recursive: true });
}
symlinkSync(join(REPO, 'node_modules'), join(checkout, 'node_modules'));
afterAll(() => rmSync(checkout, { recursive: true, force: true }));

describe('the keygen bin in a checkout', () => {
  it('is executable after every build: npx runs it from the checkout after a rebuild, not only the first time', async () => {
    // npx links the checkout's bin once; a build that wrote cli.js without its mode broke every later run.
    for (let build = 0; build < 2; build++) {
      await runOk('npm', ['run', 'build'], checkout, 240000);
      expect(statSync(join(checkout, 'dist/runtime/cli.js')).mode & 0o111).toBe(0o111);
      const { stdout } = await runOk('npx', ['--no-install', 'nestjs-zlink', 'keygen'], checkout, 60000);
      expect(stdout.trim().split('\n')).toEqual([
        expect.stringMatching(/^ZLINK_CURVE_PUBLIC_KEY=.{40}$/),
        expect.stringMatching(/^ZLINK_CURVE_SECRET_KEY=.{40}$/),
      ]);
    }
  }, 600000);
});
