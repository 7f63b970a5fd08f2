import { type SpotPublishOptions, type ZLinkSpotPublishCall, publishTopic } from '../core/objects/index.js';
import type { ObjectsHost } from './zlink-objects.js';

/**
 * Logical Multicast from outside any object (injectable in Nest): the same publish as `ctx.publish`
 * in a Spot or Actor handler, with no object as its source (`ctx.multicast.from` is `undefined`).
 */
export class ZLinkSpotPublisher {
  constructor(private readonly host: ObjectsHost) {}

  /**
   * Publishes `event` as `packet` to every Spot subscribed to (`channel`, `topic`) on the object mesh;
   * `topic` defaults to `packet`. Throws `InvalidArgument` at once for an empty channel or packet or a
   * reserved topic; nothing happens until `.async()` (see `ZLinkSpotPublishCall` for how it ends; before
   * the runtime has started it ends `Unavailable`, in a process without an object mesh `NotConfigured`).
   */
  publish(
    channel: string,
    packet: string,
    event: unknown,
    options?: { topic?: string },
  ): ZLinkSpotPublishCall {
    const topic = publishTopic(channel, packet, options);
    return {
      async: async (o?: SpotPublishOptions) => {
        const layer = await this.host.objectLayer(`publish '${channel}' topic '${topic}'`);
        await layer.multicast.publish({ channel, topic, packet, event, from: undefined, options: o });
      },
    };
  }
}
