import { Buffer } from 'node:buffer';
import { configurationError } from '../../core/errors.js';
import { isRecord, checkKeys } from '../../core/option-checks.js';
import { type ProxyHeaderStep, refused } from './proxy-step.js';
import { V1_MAX_BYTES, parseV1 } from './proxy-v1.js';
import { V2_FIXED_BYTES, V2_MIN_CAP, parseV2 } from './proxy-v2.js';

/**
 * The longest v2 header taken by default: the smallest TCP segment every host must accept (576 - 40
 * bytes), which the protocol says a header is built to fit, so a proxy sending more is not one we
 * know. AWS NLB's TLVs and HAProxy's SSL TLVs fit well inside it.
 */
export const DEFAULT_V2_CAP = 536;

/** The most a v2 header can announce: the fixed part and a 16-bit length. */
export const V2_MAX_CAP = V2_FIXED_BYTES + 0xffff;

export interface ProxyHeaderOptions {
  /** The longest v2 header accepted, fixed part and TLVs included; at least 232 (an AF_UNIX block). @default 536 */
  maxV2HeaderBytes?: number;
}

export interface NormalizedProxyHeaderOptions {
  readonly maxV2HeaderBytes: number;
}

/** `options` checked, each fault a `Configuration` error naming `field` and the key. */
export function normalizeProxyHeaderOptions(field: string, options: unknown): NormalizedProxyHeaderOptions {
  if (options === undefined) return { maxV2HeaderBytes: DEFAULT_V2_CAP };
  if (!isRecord(options)) throw configurationError(field, 'must be an object { maxV2HeaderBytes }');
  checkKeys(field, options, ['maxV2HeaderBytes']);
  const cap = options.maxV2HeaderBytes ?? DEFAULT_V2_CAP;
  if (typeof cap !== 'number' || !Number.isInteger(cap) || cap < V2_MIN_CAP || cap > V2_MAX_CAP) {
    throw configurationError(
      `${field}.maxV2HeaderBytes`,
      `must be an integer ${V2_MIN_CAP}..${V2_MAX_CAP}, got ${String(cap)}`,
    );
  }
  return { maxV2HeaderBytes: cap };
}

/**
 * Reads the PROXY protocol header (v1 or v2, told apart by the first byte) from the first bytes of
 * one connection, as they arrive, however they are cut. It holds at most one header's worth of
 * bytes (v1: 107; v2: its 16 bytes and announced length, never over the cap) and refuses as early
 * as the bytes allow, so a peer that is not a proxy is dropped on its first bytes and a slow one
 * costs at most that much memory. One parser per connection; it answers once.
 */
export class ProxyHeaderParser {
  /** The header's bytes so far, in a buffer grown by doubling (never past `bound`): copying stays linear. */
  private buf: Buffer | undefined;
  private used = 0;
  private answered = false;
  private readonly cap: number;
  private readonly bound: number;

  constructor(options: NormalizedProxyHeaderOptions = { maxV2HeaderBytes: DEFAULT_V2_CAP }) {
    this.cap = options.maxV2HeaderBytes;
    this.bound = proxyHeaderBound(options);
  }

  /** The bytes held, waiting for the rest of the header: never more than the header's bound. */
  get heldBytes(): number {
    return this.used;
  }

  /**
   * Feeds the next bytes of the connection. `more` until the header is complete (`done`, with the
   * bytes after it in `rest`) or cannot be one (`refused`). Throws once it has answered either:
   * what follows the header is the connection's own traffic, no longer this parser's.
   */
  push(chunk: Buffer): ProxyHeaderStep {
    if (this.answered) throw new Error('ProxyHeaderParser: the header was already read or refused');
    if (this.used === 0) {
      // The usual case, a whole header in the first read: read in place, nothing copied.
      const step = this.parse(chunk);
      if (step.state !== 'more') return this.answer(step);
      // `more` means fewer bytes than the header's bound: all of them are kept.
      this.append(chunk);
      return step;
    }
    const take = Math.min(chunk.length, this.bound - this.used);
    this.append(chunk.subarray(0, take));
    const step = this.parse((this.buf as Buffer).subarray(0, this.used));
    if (step.state === 'more') return step;
    if (step.state === 'done' && take < chunk.length)
      return this.answer({ ...step, rest: Buffer.concat([step.rest, chunk.subarray(take)]) });
    return this.answer(step);
  }

  /**
   * The connection ended (or its header timer fired) before an answer: `refused` as `truncated`
   * when bytes were held, `signature` when none came at all. Throws after an answer, as `push`.
   */
  end(): ProxyHeaderStep {
    if (this.answered) throw new Error('ProxyHeaderParser: the header was already read or refused');
    const held = this.used;
    return this.answer(
      held === 0
        ? refused('signature', 'the connection ended before any byte of a PROXY header')
        : refused('truncated', `the connection ended ${held} bytes into a PROXY header`),
    );
  }

  private parse(bytes: Buffer): ProxyHeaderStep {
    if (bytes.length === 0) return { state: 'more' };
    return bytes[0] === 0x0d ? parseV2(bytes, this.cap) : parseV1(bytes);
  }

  /** Copies `bytes` in (a view would keep the caller's whole chunk, a 64 KB read, alive for a few bytes). */
  private append(bytes: Buffer): void {
    const need = this.used + bytes.length;
    if (this.buf === undefined || this.buf.length < need) {
      const grown = Buffer.allocUnsafe(Math.min(this.bound, Math.max(128, need * 2)));
      this.buf?.copy(grown, 0, 0, this.used);
      this.buf = grown;
    }
    bytes.copy(this.buf, this.used);
    this.used = need;
  }

  private answer(step: ProxyHeaderStep): ProxyHeaderStep {
    this.answered = true;
    this.buf = undefined;
    this.used = 0;
    return step;
  }
}

/** The most a parser holds between chunks with this cap (the longer of the two versions' bounds). */
export function proxyHeaderBound(options: NormalizedProxyHeaderOptions): number {
  return Math.max(V1_MAX_BYTES, options.maxV2HeaderBytes);
}
