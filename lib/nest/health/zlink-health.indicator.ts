import { Injectable } from '@nestjs/common';
import { type HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { type ZLinkHealthOptions, ZLinkRuntime, checkZLinkHealth } from '../../runtime/index.js';

/**
 * A `@nestjs/terminus` health indicator for the ZLink runtime. Add it to the providers of the module
 * that imports `TerminusModule` (it needs `HealthIndicatorService` from there and `ZLinkRuntime`
 * from the global `ZLinkModule`):
 *
 * ```ts
 * @Controller('health')
 * class HealthController {
 *   constructor(private readonly health: HealthCheckService, private readonly zlink: ZLinkHealthIndicator) {}
 *   @Get() @HealthCheck()
 *   check() {
 *     return this.health.check([() => this.zlink.isHealthy('zlink')]);
 *   }
 * }
 * ```
 *
 * `up` when the runtime started, every listener is bound, every client channel has a ready candidate
 * and the Location Store (if any) answers; otherwise `down`, with `message` and `reasons` saying why.
 * Both carry the report of `checkZLinkHealth` (listeners, channels, peers, draining, store).
 */
@Injectable()
export class ZLinkHealthIndicator {
  constructor(
    private readonly runtime: ZLinkRuntime,
    private readonly indicators: HealthIndicatorService,
  ) {}

  /** Never rejects: a down runtime is a `down` result (Terminus turns it into a 503). */
  async isHealthy<const Key extends string>(
    key: Key,
    options?: ZLinkHealthOptions,
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.indicators.check(key);
    const { healthy, ...details } = await checkZLinkHealth(this.runtime, options);
    if (healthy) return session.up(details);
    return session.down({ message: details.reasons.join('; '), ...details });
  }
}
