/**
 * The pattern of `@MessagePattern`, `@EventPattern`, `ClientProxy.send` and `ClientProxy.emit` on the
 * ZLink transport: a ChannelName and a packet name, the same pair `@ChannelHandler` and
 * `ZLinkRouteClient` use. Nothing else is routed, so nothing else is accepted.
 */
export interface ZLinkPattern {
  readonly channel: string;
  readonly packet: string;
}

/** The pattern, or what is wrong with it (worded to follow "pattern X: "). */
export function readPattern(pattern: unknown): ZLinkPattern | string {
  if (typeof pattern !== 'object' || pattern === null || Array.isArray(pattern))
    return 'must be an object { channel, packet }';
  const { channel, packet } = pattern as Partial<Record<string, unknown>>;
  const extra = Object.keys(pattern).filter((key) => key !== 'channel' && key !== 'packet');
  if (extra.length > 0) return `has keys other than channel and packet: ${extra.join(', ')}`;
  if (typeof channel !== 'string' || channel.length === 0) return 'channel must be a non-empty string';
  if (typeof packet !== 'string' || packet.length === 0) return 'packet must be a non-empty string';
  return { channel, packet };
}

/** A pattern as users wrote it, for error messages; never throws. */
export function describePattern(pattern: unknown): string {
  if (typeof pattern === 'string') return JSON.stringify(pattern);
  try {
    return JSON.stringify(pattern) ?? String(pattern);
  } catch {
    return String(pattern);
  }
}
