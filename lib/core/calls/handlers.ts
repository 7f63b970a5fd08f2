import { configurationError } from '../errors.js';
import type { ZLinkMetadata } from '../wire/metadata.js';

export type MessageKind = 'send' | 'request';

/**
 * What kind of target a handler serves: a ChannelName (`'channel'`), a MeshNode's Node direct
 * namespace (`'node'`), one Spot or Actor (`'spot'`, `'actor'`: `ZLinkObjectContext`), or a session's own
 * handler on its Session owner (`'session'`: `ZLinkSessionContext`). Code that
 * switches on it should keep a default branch.
 */
export type ZLinkTargetKind = 'channel' | 'node' | 'spot' | 'actor' | 'session';

/**
 * What a channel handler learns about the message besides its payload
 * (docs/protocol.md#handler-scopes-and-context).
 */
export interface ZLinkMessageContext {
  /** The kind of target the handler serves: always `'channel'` here. */
  readonly target: 'channel';
  readonly channelName: string;
  readonly kind: MessageKind;
  readonly packet: string;
  /** Frozen snapshot; copy it to keep it past the handler's turn. */
  readonly metadata: ZLinkMetadata;
  /** Request correlation; `undefined` for a one-way send. */
  readonly correlation: number | undefined;
}

/**
 * What a Node direct handler learns: the channel context's message fields plus the physical route
 * (docs/protocol.md#handler-scopes-and-context): which mesh, and which node sent it. There is no ChannelName:
 * none was called.
 */
export interface ZLinkNodeMessageContext extends Omit<ZLinkMessageContext, 'channelName' | 'target'> {
  /** The kind of target the handler serves: always `'node'` here. */
  readonly target: 'node';
  readonly meshName: string;
  readonly sourceRid: string;
}

export type ChannelHandlerFn = (payload: unknown, context: ZLinkMessageContext) => unknown;
/** A handler that serves either kind of context (the Nest adapter builds one per method). */
export type HandlerFn = (payload: unknown, context: object) => unknown;
export type NodeHandlerFn = (payload: unknown, context: ZLinkNodeMessageContext) => unknown;

export interface ChannelHandlerRegistration {
  readonly channel: string;
  readonly kind: MessageKind;
  readonly packet: string;
  readonly handler: ChannelHandlerFn;
  /** Where the handler was declared, for error messages: "BillingHandlers.charge". */
  readonly source: string;
}

/** A Node direct handler: its namespace is the MeshName (docs/protocol.md#handler-scopes-and-context). */
export interface NodeHandlerRegistration {
  readonly mesh: string;
  readonly kind: MessageKind;
  readonly packet: string;
  readonly handler: NodeHandlerFn;
  readonly source: string;
}

interface Registration {
  readonly kind: MessageKind;
  readonly packet: string;
  readonly source: string;
}

/** One scope's handlers, one table per kind, so a lookup builds no key. */
export interface ScopeTables<R> {
  readonly request: Map<string, R>;
  readonly send: Map<string, R>;
}

/**
 * Handlers by (scope, kind, packet): the scope is a ChannelName or, for Node direct, a MeshName.
 * Lookups on the receive path are two map reads.
 */
export class HandlerRegistry<R extends Registration> {
  private readonly byScope = new Map<string, ScopeTables<R>>();

  constructor(
    private readonly scopeOf: (registration: R) => string,
    private readonly label: string,
  ) {}

  /**
   * Throws `Configuration` naming both places when (scope, kind, packet) is taken
   * (docs/protocol.md#handler-scopes-and-context).
   */
  register(registration: R): void {
    const scope = this.scopeOf(registration);
    const { kind, packet } = registration;
    let tables = this.byScope.get(scope);
    if (!tables) this.byScope.set(scope, (tables = { request: new Map(), send: new Map() }));
    const table = tables[kind];
    const existing = table.get(packet);
    if (existing) {
      throw configurationError(
        `${this.label} ${scope}/${kind}/${packet}`,
        `declared twice: ${existing.source} and ${registration.source}`,
      );
    }
    table.set(packet, registration);
  }

  lookup(scope: string, kind: MessageKind, packet: string): R | undefined {
    return this.byScope.get(scope)?.[kind].get(packet);
  }

  /** One scope's tables, for a caller that looks up many packets of one scope (a map read each). */
  tables(scope: string): ScopeTables<R> | undefined {
    return this.byScope.get(scope);
  }

  scopes(): string[] {
    return [...this.byScope.keys()];
  }

  forScope(scope: string): R[] {
    const tables = this.byScope.get(scope);
    return tables ? [...tables.request.values(), ...tables.send.values()] : [];
  }
}

export class ChannelHandlerRegistry extends HandlerRegistry<ChannelHandlerRegistration> {
  constructor() {
    super((r) => r.channel, 'handler');
  }

  channels(): string[] {
    return this.scopes();
  }

  forChannel(channel: string): ChannelHandlerRegistration[] {
    return this.forScope(channel);
  }
}

/** Node direct handlers, in a namespace per MeshName apart from every channel's. */
export class NodeHandlerRegistry extends HandlerRegistry<NodeHandlerRegistration> {
  constructor() {
    super((r) => r.mesh, 'node handler');
  }
}

/**
 * What a fanout handler learns (docs/protocol.md#classic-fanout): the channel, the packet, and the topic it
 * arrived on.
 */
export interface ZLinkFanoutContext {
  readonly channelName: string;
  readonly packet: string;
  /** As published: a string topic arrives as its string, a bytes topic as a Buffer. */
  readonly topic: string | Buffer;
  /** The NodeRid-like identity of the publisher run (its RID), once its beacon was heard. */
  readonly publisherRid: string | undefined;
}

export type FanoutHandlerFn = (payload: unknown, context: ZLinkFanoutContext) => unknown;

/** A fanout handler: found by (channel, packet), a one-way delivery (`kind` is always `send`). */
export interface FanoutHandlerRegistration {
  readonly channel: string;
  readonly kind: 'send';
  readonly packet: string;
  readonly handler: FanoutHandlerFn;
  readonly source: string;
}

export class FanoutHandlerRegistry extends HandlerRegistry<FanoutHandlerRegistration> {
  constructor() {
    super((r) => r.channel, 'fanout handler');
  }

  /** Every packet name with a handler on `channel`: the default topics of its subscriber. */
  packets(channel: string): string[] {
    return this.forScope(channel).map((r) => r.packet);
  }
}
