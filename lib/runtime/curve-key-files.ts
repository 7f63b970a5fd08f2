import process from 'node:process';
import { readFileSync } from 'node:fs';
import { configurationError } from '../core/errors.js';
import { type ZLinkKeyPair, curveKeyBytes, zlinkKeyPair } from '../core/curve-keys.js';

/** The variables a key pair travels in: what `npx nestjs-zlink keygen` prints, one per line. */
export const CURVE_ENV = {
  publicKey: 'ZLINK_CURVE_PUBLIC_KEY',
  secretKey: 'ZLINK_CURVE_SECRET_KEY',
} as const;

/** A new key pair as `keygen` prints it: `NAME=value` lines, ready for an env file. */
export function keyPairLines(pair: ZLinkKeyPair = zlinkKeyPair()): string {
  return `${CURVE_ENV.publicKey}=${pair.publicKey}\n${CURVE_ENV.secretKey}=${pair.secretKey}\n`;
}

/**
 * The key pair in the environment (`ZLINK_CURVE_PUBLIC_KEY` / `ZLINK_CURVE_SECRET_KEY`, or the same
 * names under another `prefix`), for `security.curve`. Throws `Configuration` naming a variable that is
 * missing or not a Z85 key; the runtime then checks that the two belong together.
 */
export function curveKeysFromEnv(env: NodeJS.ProcessEnv = process.env, prefix = 'ZLINK_CURVE'): ZLinkKeyPair {
  return {
    publicKey: keyFrom(`${prefix}_PUBLIC_KEY`, env[`${prefix}_PUBLIC_KEY`]),
    secretKey: keyFrom(`${prefix}_SECRET_KEY`, env[`${prefix}_SECRET_KEY`]),
  };
}

/**
 * The key pair in a file written by `npx nestjs-zlink keygen > file` (`NAME=value` lines; blank lines
 * and `#` comments are skipped). Throws `Configuration` naming the file when it cannot be read or
 * lacks a key.
 */
export function curveKeysFromFile(path: string): ZLinkKeyPair {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw configurationError(path, `cannot read the key file: ${(error as Error).message}`);
  }
  const env: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([A-Z0-9_]+)\s*=\s*(\S+)\s*$/.exec(line);
    if (m) env[m[1] as string] = m[2] as string;
  }
  try {
    return curveKeysFromEnv(env);
  } catch (error) {
    throw configurationError(path, (error as Error).message);
  }
}

function keyFrom(name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw configurationError(name, 'is not set');
  if (curveKeyBytes(value) === undefined)
    throw configurationError(name, 'is not a Z85 CURVE key (40 characters)');
  return value;
}
