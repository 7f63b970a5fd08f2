import { configurationError } from './errors.js';
import type { ZLinkMetadata } from './metadata.js';

export type MessageKind = 'send' | 'request';

/** What a channel handler learns about the message besides its payload (02 §6). */
export interface ZLinkMessageContext {
  readonly channelName: string;
  readonly kind: MessageKind;
  readonly packet: string;
  /** Frozen snapshot; copy it to keep it past the handler's turn. */
  readonly metadata: ZLinkMetadata;
  /** Request correlation; `undefined` for a one-way send. */
  readonly correlation: number | undefined;
}

export type ChannelHandlerFn = (payload: unknown, context: ZLinkMessageContext) => unknown;

export interface ChannelHandlerRegistration {
  readonly channel: string;
  readonly kind: MessageKind;
  readonly packet: string;
  readonly handler: ChannelHandlerFn;
  /** Where the handler was declared, for error messages: "BillingHandlers.charge". */
  readonly source: string;
}

/**
 * Channel handlers by (ChannelName, kind, packet). Lookups on the receive path are two map reads.
 */
/** A channel's handlers, one table per kind, so a lookup builds no key. */
interface ChannelTables {
  readonly request: Map<string, ChannelHandlerRegistration>;
  readonly send: Map<string, ChannelHandlerRegistration>;
}

export class ChannelHandlerRegistry {
  private readonly byChannel = new Map<string, ChannelTables>();

  /** Throws `Configuration` naming both places when (channel, kind, packet) is taken (02 §6). */
  register(registration: ChannelHandlerRegistration): void {
    const { channel, kind, packet } = registration;
    let tables = this.byChannel.get(channel);
    if (!tables) this.byChannel.set(channel, (tables = { request: new Map(), send: new Map() }));
    const table = tables[kind];
    const existing = table.get(packet);
    if (existing) {
      throw configurationError(
        `handler ${channel}/${kind}/${packet}`,
        `declared twice: ${existing.source} and ${registration.source}`,
      );
    }
    table.set(packet, registration);
  }

  lookup(channel: string, kind: MessageKind, packet: string): ChannelHandlerRegistration | undefined {
    return this.byChannel.get(channel)?.[kind].get(packet);
  }

  channels(): string[] {
    return [...this.byChannel.keys()];
  }

  forChannel(channel: string): ChannelHandlerRegistration[] {
    const tables = this.byChannel.get(channel);
    return tables ? [...tables.request.values(), ...tables.send.values()] : [];
  }
}
