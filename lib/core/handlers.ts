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
export class ChannelHandlerRegistry {
  private readonly byChannel = new Map<string, Map<string, ChannelHandlerRegistration>>();

  /** Throws `Configuration` naming both places when (channel, kind, packet) is taken (02 §6). */
  register(registration: ChannelHandlerRegistration): void {
    const { channel, kind, packet } = registration;
    let table = this.byChannel.get(channel);
    if (!table) this.byChannel.set(channel, (table = new Map()));
    const key = handlerKey(kind, packet);
    const existing = table.get(key);
    if (existing) {
      throw configurationError(
        `handler ${channel}/${kind}/${packet}`,
        `declared twice: ${existing.source} and ${registration.source}`,
      );
    }
    table.set(key, registration);
  }

  lookup(channel: string, kind: MessageKind, packet: string): ChannelHandlerRegistration | undefined {
    return this.byChannel.get(channel)?.get(handlerKey(kind, packet));
  }

  channels(): string[] {
    return [...this.byChannel.keys()];
  }

  forChannel(channel: string): ChannelHandlerRegistration[] {
    return [...(this.byChannel.get(channel)?.values() ?? [])];
  }
}

function handlerKey(kind: MessageKind, packet: string): string {
  return kind === 'request' ? `r:${packet}` : `s:${packet}`;
}
