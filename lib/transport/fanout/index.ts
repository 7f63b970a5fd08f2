export { FanoutPublisher, type FanoutPublisherConfig } from './fanout-publisher.js';
export { FanoutSubscriber, type FanoutSubscriberConfig } from './fanout-subscriber.js';
