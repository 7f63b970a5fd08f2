import { PING_INTERVAL_MS, SILENCE_MS } from '../timing.js';
import { SilenceClock, heardBy } from '../liveness/index.js';

/**
 * A client connection's side of ClientServer liveness: while connected it pings its server every
 * second, and hears the server's pings (see `ServerListener`), so a server that stops answering (hung,
 * SIGSTOPped, cut off) is lost after `SILENCE_MS` and its requests end `RouteError` instead of each
 * waiting out its own timeout. The server pings from its timer, so one whose handlers are all busy
 * and that reads nothing is still heard.
 */
export class ServerLiveness {
  private timer: NodeJS.Timeout | undefined;
  private readonly clock = new SilenceClock();
  private lastHeard = 0;
  /** What the receive loop had taken at the last tick: more since means the server was heard. */
  private lastTaken = 0;

  constructor(
    private readonly ping: () => void,
    /** Nothing came from the server for `SILENCE_MS` of the time this process read. */
    private readonly silent: () => void,
    /**
     * Messages the current DEALER's receive loop has taken (its `ReadProgress`): no clock read per message.
     */
    private readonly taken: () => number,
  ) {}

  /** Runs while the connection is up (`up`), stops otherwise. */
  follow(up: boolean): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (!up) return;
    const now = Date.now();
    this.lastHeard = now;
    this.lastTaken = this.taken();
    this.clock.reset(now);
    this.timer = setInterval(this.tick, PING_INTERVAL_MS);
  }

  private readonly tick = (): void => {
    const now = Date.now();
    const taken = this.taken();
    if (taken !== this.lastTaken) this.lastHeard = now;
    this.lastTaken = taken;
    this.lastHeard = heardBy(this.lastHeard, this.clock.credit(now), now);
    if (now - this.lastHeard > SILENCE_MS) this.silent();
    else this.ping();
  };
}
