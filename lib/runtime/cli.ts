#!/usr/bin/env node
// `npx nestjs-zlink <command>`: keygen prints a new CURVE key pair as env lines; records lists (and
// removes) what the stores keep in Redis (see docs/operations.md).
import process from 'node:process';
import { keyPairLines } from './curve-key-files.js';
import { recordsCommand } from './records-command.js';

const USAGE = `usage:
  nestjs-zlink keygen    print a new CURVE key pair:
    ZLINK_CURVE_PUBLIC_KEY=...  (give it to the nodes that connect to this one)
    ZLINK_CURVE_SECRET_KEY=...  (keep it on this node only)
  nestjs-zlink records --redis <url> [--key-prefix zlink] [--relocation-key-prefix zlink-relocation]
                       [--remove-stale] [--json]
    list the records the stores keep in Redis, by kind, with their writers and whether a writer's
    lease is alive; with --remove-stale, remove those whose writers are all gone (a dry run without)`;

const [command, ...rest] = process.argv.slice(2);
if (command === 'keygen') process.stdout.write(keyPairLines());
else if (command === 'records') {
  recordsCommand(rest).then(
    (out) => {
      (out.code === 0 ? process.stdout : process.stderr).write(out.text);
      process.exitCode = out.code;
    },
    (error: unknown) => {
      process.stderr.write(
        `nestjs-zlink records: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exitCode = 1;
    },
  );
} else {
  process.stderr.write(`${USAGE}\n`);
  process.exitCode = command === undefined || command === '--help' || command === 'help' ? 0 : 2;
}
