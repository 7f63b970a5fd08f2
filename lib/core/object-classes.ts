import { configurationError } from './errors.js';
import { HandlerRegistry, type MessageKind, type ScopeTables } from './handlers.js';
import type { NormalizedOptions } from './options.js';
import type { ObjectKind } from './object-stores.js';

/**
 * The object classes of a process (`@Spot` / `@Actor` in Nest), described as plain data at bootstrap
 * so the object runtime can build an instance per activation and find its handlers without knowing
 * where they were declared (DESIGN §7).
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

/** Which lifecycle methods the class has (DESIGN §7): the runtime calls only those present. */
export interface ObjectLifecycleHooks {
  readonly onActivate: boolean;
  readonly onDeactivate: boolean;
  readonly capture: boolean;
  readonly restore: boolean;
}

export interface ObjectClassDescription {
  readonly kind: ObjectKind;
  readonly type: string;
  /** What the adapter builds an instance from (in Nest: the class, its DI token). */
  readonly token: unknown;
  /** The class name, for error messages. */
  readonly source: string;
  /** The decorator's options object as given, frozen; its fields grow with the object runtime. */
  readonly options: Readonly<Record<string, unknown>>;
  readonly handlers: readonly ObjectHandlerDescription[];
  readonly subscriptions: readonly ObjectSubscriptionDescription[];
  readonly hooks: ObjectLifecycleHooks;
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
  private readonly byKey = new Map<string, ObjectClassDescription>();
  private readonly handlers = new HandlerRegistry<ObjectHandlerEntry>((r) => r.scope, 'object handler');

  register(description: ObjectClassDescription): void {
    const key = `${description.kind} ${description.type}`;
    const existing = this.byKey.get(key);
    if (existing) {
      throw configurationError(
        `@${label(description.kind)}('${description.type}')`,
        `declared twice: ${existing.source} and ${description.source}`,
      );
    }
    for (const handler of description.handlers) this.handlers.register({ ...handler, scope: key });
    this.byKey.set(key, description);
  }

  get(kind: ObjectKind, type: string): ObjectClassDescription | undefined {
    return this.byKey.get(`${kind} ${type}`);
  }

  /** Every class, in registration order. */
  all(): ObjectClassDescription[] {
    return [...this.byKey.values()];
  }

  /** The handlers of one class by message kind and packet: an activation keeps them, one map read per message. */
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

function label(kind: ObjectKind): string {
  return kind === 'spot' ? 'Spot' : 'Actor';
}

/**
 * Declared object classes need a mesh that hosts objects and a Location Store for their authority
 * records (issue 16 item 10): without them they would never activate, so startup fails with
 * `Configuration` naming the first class and the missing option, before any socket opens.
 */
export function checkObjectClasses(options: NormalizedOptions, classes: ObjectClassRegistry): void {
  const first = classes.all()[0];
  if (!first) return;
  const where = `${objectDecoratorName(first.kind)}('${first.type}') ${first.source}`;
  if (!options.locationStore) {
    throw configurationError(
      where,
      "object classes need the locationStore option (their authority records live there) and a mesh with objectRole 'server'",
    );
  }
  for (const mesh of options.meshes.values()) if (mesh.objectRole === 'server') return;
  const objectMesh = [...options.meshes.entries()].find(([, m]) => m.objectRole !== 'none');
  throw configurationError(
    where,
    objectMesh
      ? `meshes.${objectMesh[0]}.objectRole is '${objectMesh[1].objectRole}'; hosting objects needs objectRole 'server'`
      : "no mesh hosts objects: set objectRole: 'server' on one mesh (meshes.<mesh>.objectRole)",
  );
}
