import { configurationError } from '../errors.js';
import { HandlerRegistry, type MessageKind, type ScopeTables } from '../calls/handlers.js';
import type { NormalizedOptions } from '../options/options.js';
import type { ObjectKind } from '../kinds.js';
import { BEACON_TOPIC } from '../wire/fanout-records.js';
import {
  type NormalizedPersistOptions,
  type PersistOptions,
  checkPersistentClass,
  normalizePersistOptions,
} from './persist-options.js';

/**
 * The object classes of a process (`@Spot` / `@Actor` in Nest), described as plain data at bootstrap
 * so the object runtime can build an instance per activation and find its handlers without knowing
 * where they were declared (docs/architecture.md#public-surface).
 */

/** One `@SpotHandler` / `@ActorHandler` method. */
export interface ObjectHandlerDescription {
  readonly packet: string;
  readonly kind: MessageKind;
  /** The method's name on the class. */
  readonly method: string;
  /** "RoomSpot.join", for error messages. */
  readonly source: string;
}

/** One `@SpotSubscribe`: a Logical Multicast subscription opened when the Spot activates. */
export interface ObjectSubscriptionDescription {
  readonly channel: string;
  /** As declared, else the packet name of the method's handler. */
  readonly topic: string;
  /** The handler method that receives the events. */
  readonly method: string;
  readonly source: string;
}

/** Which lifecycle methods the class has: the runtime calls only those present. */
export interface ObjectLifecycleHooks {
  readonly onActivate: boolean;
  readonly onDeactivate: boolean;
  readonly capture: boolean;
  readonly restore: boolean;
  /** A Spot's: an Actor asks to join (throwing refuses it). */
  readonly onActorJoin: boolean;
  /** A Spot's: a member Actor left or ended. */
  readonly onActorLeave: boolean;
  /** An Actor's: a session bound to it ended (`onSessionClosed(ctx, session, reason)`). */
  readonly onSessionClosed: boolean;
  /**
   * An Actor's: a bound session's connection dropped and its client may resume it
   * (`onSessionDropped(ctx, session, reason)`).
   */
  readonly onSessionDropped: boolean;
  /** An Actor's: a bound session's client resumed it after a drop (`onSessionResumed(ctx, session)`). */
  readonly onSessionResumed: boolean;
}

/** The lifecycle methods the runtime calls when a class has them (docs/architecture.md#public-surface). */
export type ObjectLifecycleHook = keyof ObjectLifecycleHooks;

const LIFECYCLE_HOOKS: readonly ObjectLifecycleHook[] = [
  'onActivate',
  'onDeactivate',
  'capture',
  'restore',
  'onActorJoin',
  'onActorLeave',
  'onSessionClosed',
  'onSessionDropped',
  'onSessionResumed',
];

/** Which lifecycle methods a class's prototype has: the one rule, for decorated and plain classes. */
export function lifecycleHooksOf(prototype: object): ObjectLifecycleHooks {
  const has = (name: string): boolean => typeof (prototype as Record<string, unknown>)[name] === 'function';
  return Object.freeze(
    Object.fromEntries(LIFECYCLE_HOOKS.map((name) => [name, has(name)])) as unknown as ObjectLifecycleHooks,
  );
}

/** What `@Spot(type, options)` / `@Actor(type, options)` take besides the type. */
export interface ObjectClassOptions {
  /**
   * The object may be moved to another node by `ZLinkObjects.relocate` (and, once it exists, by a drain
   * that relocates). Its moves are recorded in the Relocation Store, so the `relocationStore` option is
   * required. @default false
   */
  readonly relocatable?: boolean;
  /**
   * The objects keep their state in a State Store of the `stateStores` option: what `capture()` returns,
   * restored through `restore(state, ctx)` (the class needs both) wherever the object is activated next
   * (docs/objects.md#durable-objects). Checked at startup. @default not persistent
   */
  readonly persist?: PersistOptions;
}

/** The options as the runtime reads them: every field set. */
export interface NormalizedObjectClassOptions {
  readonly relocatable: boolean;
  /** `undefined`: not persistent. */
  readonly persist: NormalizedPersistOptions | undefined;
}

const CLASS_OPTION_KEYS = ['relocatable', 'persist'];

/**
 * `options` of the class `where` names, checked: an unknown key or a value of the wrong type is
 * `Configuration` naming it, so a typo never quietly leaves an object unable to move.
 */
export function normalizeObjectClassOptions(where: string, options: unknown): NormalizedObjectClassOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw configurationError(`${where} options`, 'must be an object');
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given))
    if (!CLASS_OPTION_KEYS.includes(key))
      throw configurationError(
        `${where} options.${key}`,
        `is not an option (${CLASS_OPTION_KEYS.join(', ')})`,
      );
  const { relocatable = false } = given;
  if (typeof relocatable !== 'boolean')
    throw configurationError(`${where} options.relocatable`, 'must be a boolean');
  return Object.freeze({ relocatable, persist: normalizePersistOptions(where, given.persist) });
}

export interface ObjectClassDescription {
  readonly kind: ObjectKind;
  readonly type: string;
  /** What the adapter builds an instance from (in Nest: the class, its DI token). */
  readonly token: unknown;
  /** The class name, for error messages. */
  readonly source: string;
  /** The decorator's options as given; `ObjectClassRegistry.register` checks them. */
  readonly options: ObjectClassOptions;
  readonly handlers: readonly ObjectHandlerDescription[];
  readonly subscriptions: readonly ObjectSubscriptionDescription[];
  readonly hooks: ObjectLifecycleHooks;
}

/**
 * The packet of a route flush: an ObjectRequest that runs no handler and takes no turn; its owner
 * answers it as it admits it, behind every call that reached the object on the same path before it.
 */
export const OBJECT_FLUSH_PACKET = 'zlink:flush';

/**
 * Packets under this prefix are the runtime's own (a flush, membership changes): no class may declare
 * one, and `toSpot(id)` / `toActor(id)` refuse them, so application code can never forge one.
 */
export const RUNTIME_PACKET_PREFIX = 'zlink:';

/** Whether `packet` is one of the runtime's own (see `RUNTIME_PACKET_PREFIX`). */
export function isRuntimePacket(packet: string): boolean {
  // The first character rules out nearly every application packet without a string compare.
  return packet.charCodeAt(0) === 122 && packet.startsWith(RUNTIME_PACKET_PREFIX);
}

/**
 * Why `packet` cannot be an application's packet, `undefined` when it can: a non-empty string and, when
 * `reserved` (a call to an object, an Actor's Push to its sessions), outside the runtime's `zlink:` prefix.
 */
export function packetProblem(packet: unknown, reserved = true): string | undefined {
  if (typeof packet !== 'string' || packet.length === 0)
    return `must be a non-empty string, got ${String(packet)}`;
  if (reserved && isRuntimePacket(packet))
    return `'${packet}': packets starting '${RUNTIME_PACKET_PREFIX}' are the runtime's own`;
  return undefined;
}

/** The fanout liveness topic as a string: the runtime's own on every pub/sub path. */
const BEACON = BEACON_TOPIC.toString('latin1');

/**
 * Why `topic` cannot be subscribed to or published on, `undefined` when it can: a non-empty string,
 * neither the liveness topic nor under the runtime's `zlink:` prefix — values the framework uses
 * itself (docs/protocol.md#logical-multicast). One rule for `@SpotSubscribe` and for a publish.
 */
export function topicProblem(topic: unknown): string | undefined {
  if (typeof topic !== 'string' || topic.length === 0) return 'must be a non-empty string';
  if (topic === BEACON) return 'is the reserved liveness topic 01 5A 4C 46 31';
  if (topic.startsWith(RUNTIME_PACKET_PREFIX))
    return `topics starting '${RUNTIME_PACKET_PREFIX}' are the runtime's own`;
  return undefined;
}

/** A class's Logical Multicast subscriptions by channel, then topic: two map reads per event. */
export type SubscriptionTable = ReadonlyMap<string, ReadonlyMap<string, ObjectSubscriptionDescription>>;

/** A class as registered: its options checked, every field set. */
export interface RegisteredObjectClass extends ObjectClassDescription {
  readonly options: NormalizedObjectClassOptions;
}

interface ObjectHandlerEntry extends ObjectHandlerDescription {
  readonly scope: string;
}

/**
 * Object classes by (kind, type), their handlers by (type, kind, packet). Registration throws
 * `Configuration` naming both places for a second class of one (kind, type) or a second handler of one
 * (type, kind, packet).
 */
export class ObjectClassRegistry {
  private readonly byKey = new Map<string, RegisteredObjectClass>();
  private readonly handlers = new HandlerRegistry<ObjectHandlerEntry>((r) => r.scope, 'object handler');
  private readonly subscriptions = new Map<string, SubscriptionTable>();

  register(description: ObjectClassDescription): void {
    const key = `${description.kind} ${description.type}`;
    const where = `@${label(description.kind)}('${description.type}')`;
    const existing = this.byKey.get(key);
    if (existing) {
      throw configurationError(where, `declared twice: ${existing.source} and ${description.source}`);
    }
    const options = normalizeObjectClassOptions(`${where} ${description.source}`, description.options);
    const reserved = description.handlers.find((h) => isRuntimePacket(h.packet));
    if (reserved)
      throw configurationError(
        `${where} ${reserved.source}`,
        `packet '${reserved.packet}': packets starting '${RUNTIME_PACKET_PREFIX}' are the runtime's own (route flushes, membership)`,
      );
    if (description.kind === 'actor' && description.subscriptions.length > 0)
      throw configurationError(`${where} ${description.source}`, 'only Spots subscribe to Logical Multicast');
    const subscriptions = subscriptionTable(where, description.subscriptions);
    for (const handler of description.handlers) this.handlers.register({ ...handler, scope: key });
    if (subscriptions) this.subscriptions.set(key, subscriptions);
    this.byKey.set(key, { ...description, options });
  }

  /** A class's subscriptions (see `SubscriptionTable`); `undefined` when it has none. */
  subscriptionsOf(kind: ObjectKind, type: string): SubscriptionTable | undefined {
    return this.subscriptions.get(`${kind} ${type}`);
  }

  get(kind: ObjectKind, type: string): RegisteredObjectClass | undefined {
    return this.byKey.get(`${kind} ${type}`);
  }

  /** Every class, in registration order. */
  all(): RegisteredObjectClass[] {
    return [...this.byKey.values()];
  }

  /**
   * The handlers of one class by message kind and packet: an activation keeps them, one map read per message.
   */
  handlersOf(kind: ObjectKind, type: string): ScopeTables<ObjectHandlerDescription> | undefined {
    return this.handlers.tables(`${kind} ${type}`);
  }

  /** The handler of (kind, type, message kind, packet): two map reads, as for channels. */
  handler(
    kind: ObjectKind,
    type: string,
    messageKind: MessageKind,
    packet: string,
  ): ObjectHandlerDescription | undefined {
    return this.handlers.lookup(`${kind} ${type}`, messageKind, packet);
  }
}

/** `@Spot` / `@Actor`, as users wrote it. */
export function objectDecoratorName(kind: ObjectKind): string {
  return `@${label(kind)}`;
}

/** A class as messages name it: `@Actor('player') Player`. */
function classLabel(c: ObjectClassDescription): string {
  return `${objectDecoratorName(c.kind)}('${c.type}') ${c.source}`;
}

function label(kind: ObjectKind): string {
  return kind === 'spot' ? 'Spot' : 'Actor';
}

/**
 * Declared object classes need a mesh that hosts objects and a Location Store for their authority records
 * (issue 16 item 10), a relocatable one the Relocation Store (docs/protocol.md#relocation-store), and a
 * persistent one its `capture()` and `restore()` methods and a State Store (docs/decisions.md#durable-state):
 * without them they would never activate, move or be saved, so startup fails with `Configuration` naming
 * the class and the missing option, before any socket opens.
 */
export function checkObjectClasses(options: NormalizedOptions, classes: ObjectClassRegistry): void {
  const first = classes.all()[0];
  if (!first) return;
  const where = classLabel(first);
  if (!options.locationStore) {
    throw configurationError(
      where,
      "object classes need the locationStore option (their authority records live there) and a mesh with objectRole 'server'",
    );
  }
  const relocatable = classes.all().find((c) => c.options.relocatable);
  if (relocatable && !options.relocationStore)
    throw configurationError(
      'relocationStore',
      `${classLabel(relocatable)} is relocatable: its moves are recorded in the Relocation Store, register relocationStore`,
    );
  for (const c of classes.all())
    if (c.options.persist)
      checkPersistentClass(classLabel(c), c.options.persist, c.hooks, options.stateStores);
  for (const mesh of options.meshes.values()) if (mesh.objectRole === 'server') return;
  const objectMesh = [...options.meshes.entries()].find(([, m]) => m.objectRole !== 'none');
  throw configurationError(
    where,
    objectMesh
      ? `meshes.${objectMesh[0]}.objectRole is '${objectMesh[1].objectRole}'; hosting objects needs objectRole 'server'`
      : "no mesh hosts objects: set objectRole: 'server' on one mesh (meshes.<mesh>.objectRole)",
  );
}

/**
 * The subscriptions of class `where` by channel and topic, checked: an empty channel, a reserved topic
 * or one (channel, topic) twice is `Configuration` naming the method. `undefined` when there are none.
 */
function subscriptionTable(
  where: string,
  subscriptions: readonly ObjectSubscriptionDescription[],
): SubscriptionTable | undefined {
  if (subscriptions.length === 0) return undefined;
  const table = new Map<string, Map<string, ObjectSubscriptionDescription>>();
  for (const s of subscriptions) {
    const at = `${where} @SpotSubscribe on ${s.source}`;
    if (typeof s.channel !== 'string' || s.channel.length === 0)
      throw configurationError(at, 'the channel must be a non-empty string');
    const problem = topicProblem(s.topic);
    if (problem !== undefined) throw configurationError(at, `topic '${String(s.topic)}' ${problem}`);
    let topics = table.get(s.channel);
    if (!topics) table.set(s.channel, (topics = new Map()));
    const taken = topics.get(s.topic);
    if (taken)
      throw configurationError(
        at,
        `channel '${s.channel}' topic '${s.topic}' is subscribed twice: ${taken.source} and ${s.source}`,
      );
    topics.set(s.topic, s);
  }
  return table;
}
