import { ZLINK_FANOUT_HANDLER } from './zlink.constants.js';
import { handlerDecorator } from './handler-decorator.js';

/** What `@FanoutHandler` records on a method. @internal */
export interface FanoutHandlerMetadata {
  readonly channel: string;
  readonly packet: string;
}

/**
 * Marks a method as the handler of `packetName` events on the classic fanout channel `channelName`
 * (docs/protocol.md#classic-fanout). The subscriber finds it by packet name; an event with no handler is
 * discarded and reported `no_handler`. The method runs through Nest's pipeline with `(payload,
 * ZLinkFanoutContext)`, whose `topic` says which subscribed topic the event arrived on. Bootstrap fails with
 * `Configuration` for a duplicate, or a channel without a subscriber here.
 */
export function FanoutHandler(channelName: string, packetName: string): MethodDecorator {
  const entry: FanoutHandlerMetadata = { channel: channelName, packet: packetName };
  return handlerDecorator(
    'FanoutHandler',
    ZLINK_FANOUT_HANDLER,
    { name: 'channelName', value: channelName },
    packetName,
    'send',
    entry,
  );
}
