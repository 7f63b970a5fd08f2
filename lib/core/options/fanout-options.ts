import { Buffer } from 'node:buffer';
import { type EndpointOptions, type NormalizedEndpoint, normalizeEndpoints } from './endpoint-options.js';
import { configurationError } from '../errors.js';
import {
  type ListenerKeys,
  type ListenerSecurityOptions,
  normalizeListenerSecurity,
} from './security-options.js';
import { isBeaconTopic } from '../wire/fanout-records.js';
import {
  type ListenOptions,
  type NormalizedListen,
  checkKeys,
  checkName,
  isRecord,
  normalizeListen,
  positiveInt,
} from '../option-checks.js';

/** A topic as the user gives it: a string (sent as its UTF-8 bytes) or raw bytes. */
export type FanoutTopic = string | Uint8Array;

export interface FanoutPublisherOptions {
  listen?: ListenOptions;
  /**
   * Refuse to drop: a publish waits while a subscriber's queue is full and ends `Timeout` at its
   * deadline. @default false (a slow subscriber loses its share; publish still succeeds)
   */
  noDrop?: boolean;
  /**
   * zeromq messages queued per subscriber before its share is dropped (or, with `noDrop`, publish
   * waits). One message carries up to 512 events of one topic. @default 1000
   */
  sendHighWaterMark?: number;
  /** How often the liveness beacon goes out on the reserved topic. @default 1000 */
  beaconIntervalMs?: number;
  /**
   * The publisher's identity in its beacon and descriptor. @default `<hostname>-<pid>-<random per
   * runtime>-<channel>`
   */
  rid?: string;
  /**
   * This publisher's own CURVE key pair instead of the runtime's (needs `security.curve`): its descriptor
   * carries that public key, and subscribers connect to it. @default the runtime's pair
   */
  security?: ListenerSecurityOptions;
}

export interface FanoutSubscriberOptions {
  /**
   * Publisher endpoints, or `{ endpoint, rid?, publicKey? }`: `rid` is the publisher RID expected there
   * (another run's events are not delivered); with `security.curve`, `publicKey` is the publisher's key
   * (required then). Not together with `discovery: 'auto'` (docs/protocol.md#discovery).
   */
  connect?: EndpointOptions[];
  /** `auto`: the publishers the Location Store lists (needs `locationStore`). @default 'manual' */
  discovery?: 'manual' | 'auto';
  /** Topics to receive, matched exactly. @default the packet names of this channel's handlers */
  topics?: FanoutTopic[];
  /** zeromq messages this subscriber buffers per publisher before the publisher drops. @default 1000 */
  receiveHighWaterMark?: number;
  /** A publisher not heard from (beacon or event) this long is reported silent. @default 5000 */
  silenceTimeoutMs?: number;
}

export interface FanoutChannelOptions {
  publisher?: FanoutPublisherOptions;
  subscriber?: FanoutSubscriberOptions;
}

export interface NormalizedFanoutChannel {
  readonly channel: string;
  readonly publisher:
    | {
        readonly listen: NormalizedListen;
        readonly noDrop: boolean;
        readonly sendHighWaterMark: number;
        readonly beaconIntervalMs: number;
        readonly rid: string | undefined;
        /** Its own key pair (`security.curve`), when it has one. */
        readonly keys: ListenerKeys | undefined;
      }
    | undefined;
  readonly subscriber:
    | {
        readonly connect: readonly NormalizedEndpoint[];
        readonly discovery: 'manual' | 'auto';
        /** `undefined`: the packet names of the channel's handlers. */
        readonly topics: readonly SubscribedTopic[] | undefined;
        readonly receiveHighWaterMark: number;
        readonly silenceTimeoutMs: number;
      }
    | undefined;
}

/** A subscribed topic: its bytes (what zeromq filters on) and the form the user gave (what handlers see). */
export interface SubscribedTopic {
  readonly bytes: Buffer;
  readonly form: string | Buffer;
}

const PUBLISHER_KEYS = ['listen', 'noDrop', 'sendHighWaterMark', 'beaconIntervalMs', 'rid', 'security'];
const SUBSCRIBER_KEYS = ['connect', 'discovery', 'topics', 'receiveHighWaterMark', 'silenceTimeoutMs'];

/** A topic's bytes, or `undefined` with the reason it cannot be one. */
export function topicBytes(topic: unknown): Buffer | string {
  if (typeof topic === 'string') {
    if (topic.length === 0) return 'a topic must not be empty';
    const bytes = Buffer.from(topic, 'utf8');
    return isBeaconTopic(bytes) ? 'is the reserved liveness topic 01 5A 4C 46 31' : bytes;
  }
  if (topic instanceof Uint8Array) {
    if (topic.length === 0) return 'a topic must not be empty';
    if (isBeaconTopic(topic)) return 'is the reserved liveness topic 01 5A 4C 46 31';
    return Buffer.from(topic);
  }
  return 'a topic is a string or bytes';
}

export function normalizeFanout(
  value: unknown,
  hasStore: boolean,
  curve = false,
): Map<string, NormalizedFanoutChannel> {
  const out = new Map<string, NormalizedFanoutChannel>();
  if (value === undefined) return out;
  if (!isRecord(value)) throw configurationError('fanout', 'must be an object keyed by ChannelName');
  for (const [channel, entry] of Object.entries(value)) {
    const field = `fanout.${channel}`;
    checkName(field, channel);
    if (!isRecord(entry)) throw configurationError(field, 'must be an object { publisher?, subscriber? }');
    checkKeys(field, entry, ['publisher', 'subscriber']);
    if (entry.publisher === undefined && entry.subscriber === undefined)
      throw configurationError(field, 'registers neither a publisher nor a subscriber');
    out.set(
      channel,
      Object.freeze({
        channel,
        publisher:
          entry.publisher === undefined ? undefined : publisher(`${field}.publisher`, entry.publisher, curve),
        subscriber:
          entry.subscriber === undefined
            ? undefined
            : subscriber(`${field}.subscriber`, entry.subscriber, hasStore, curve),
      }),
    );
  }
  return out;
}

function publisher(
  field: string,
  p: unknown,
  curve: boolean,
): NonNullable<NormalizedFanoutChannel['publisher']> {
  if (!isRecord(p))
    throw configurationError(field, 'must be an object { listen?, noDrop?, sendHighWaterMark? }');
  checkKeys(field, p, PUBLISHER_KEYS);
  if (p.noDrop !== undefined && typeof p.noDrop !== 'boolean')
    throw configurationError(`${field}.noDrop`, 'must be true or false');
  return {
    listen: normalizeListen(`${field}.listen`, p.listen),
    noDrop: p.noDrop === true,
    sendHighWaterMark: positiveInt(`${field}.sendHighWaterMark`, p.sendHighWaterMark, 1000),
    beaconIntervalMs: positiveInt(`${field}.beaconIntervalMs`, p.beaconIntervalMs, 1000),
    rid: p.rid === undefined ? undefined : checkName(`${field}.rid`, p.rid),
    keys: normalizeListenerSecurity(`${field}.security`, p.security, curve),
  };
}

function subscriber(
  field: string,
  s: unknown,
  hasStore: boolean,
  curve: boolean,
): NonNullable<NormalizedFanoutChannel['subscriber']> {
  if (!isRecord(s)) throw configurationError(field, 'must be an object { connect?, discovery?, topics? }');
  // NoDrop belongs to the publisher (docs/protocol.md#classic-fanout): say so rather than "unknown key".
  if (s.noDrop !== undefined)
    throw configurationError(
      `${field}.noDrop`,
      'noDrop is a publisher option (fanout.<channel>.publisher.noDrop)',
    );
  checkKeys(field, s, SUBSCRIBER_KEYS);
  const connect = normalizeEndpoints(`${field}.connect`, s.connect ?? [], {
    what: 'publisher',
    curve,
    repeats: 'once',
    ridWithCurve: false,
    checkRid: checkName,
  });
  const discovery = s.discovery ?? 'manual';
  if (discovery !== 'manual' && discovery !== 'auto')
    throw configurationError(`${field}.discovery`, `must be 'manual' or 'auto', got ${String(discovery)}`);
  if (discovery === 'auto' && !hasStore)
    throw configurationError(`${field}.discovery`, "'auto' needs a locationStore");
  if (discovery === 'auto' && connect.length > 0)
    throw configurationError(
      `${field}.connect`,
      "a subscriber takes its publishers from the store (discovery: 'auto') or from connect, not both",
    );
  if (discovery === 'manual' && connect.length === 0)
    throw configurationError(
      `${field}.connect`,
      "no publisher endpoint; list endpoints or use discovery: 'auto'",
    );
  let topics: SubscribedTopic[] | undefined;
  if (s.topics !== undefined) {
    if (!Array.isArray(s.topics) || s.topics.length === 0)
      throw configurationError(`${field}.topics`, 'must be a non-empty array of strings or bytes');
    topics = s.topics.map((t: unknown, i) => {
      const bytes = topicBytes(t);
      if (typeof bytes === 'string') throw configurationError(`${field}.topics[${i}]`, bytes);
      return { bytes, form: typeof t === 'string' ? t : bytes };
    });
  }
  return {
    connect: Object.freeze(connect),
    discovery,
    topics,
    receiveHighWaterMark: positiveInt(`${field}.receiveHighWaterMark`, s.receiveHighWaterMark, 1000),
    silenceTimeoutMs: positiveInt(`${field}.silenceTimeoutMs`, s.silenceTimeoutMs, 5000),
  };
}
