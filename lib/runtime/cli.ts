#!/usr/bin/env node
// `npx nestjs-zlink keygen`: prints a new CURVE key pair as env lines (see docs/operations.md).
import process from 'node:process';
import { keyPairLines } from './curve-key-files.js';

const USAGE = `usage: nestjs-zlink keygen    print a new CURVE key pair:
  ZLINK_CURVE_PUBLIC_KEY=...  (give it to the nodes that connect to this one)
  ZLINK_CURVE_SECRET_KEY=...  (keep it on this node only)`;

const [command] = process.argv.slice(2);
if (command === 'keygen') process.stdout.write(keyPairLines());
else {
  process.stderr.write(`${USAGE}\n`);
  process.exitCode = command === undefined || command === '--help' || command === 'help' ? 0 : 2;
}
