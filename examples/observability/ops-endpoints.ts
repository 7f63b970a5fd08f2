// Observability as docs/operations.md shows it: lifecycle events as Observables, the Prometheus text on
// a /metrics route, and a /health route through @nestjs/terminus. The file is compiled with the
// repository (typecheck), not run; an HTTP app serves these controllers as any other.
import 'reflect-metadata';
import { Controller, Get, Header, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { ZLinkEventStream, ZLinkModule, ZLinkRuntime } from 'nestjs-zlink';
import { ZLinkHealthIndicator } from 'nestjs-zlink/terminus';

@Controller()
export class MetricsController {
  constructor(
    stream: ZLinkEventStream,
    private readonly zlink: ZLinkRuntime,
  ) {
    stream.of('server_lost', 'peer_lost').subscribe((e) => console.warn('zlink', e)); // lifecycle only: no per-message cost
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4')
  metrics() {
    return this.zlink.prometheus(); // zlink_request_duration_seconds_bucket{route="client-server",channel="billing",le="0.001"} ...
  }
}

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly zlink: ZLinkHealthIndicator,
  ) {}

  @Get('health')
  @HealthCheck()
  check() {
    return this.health.check([() => this.zlink.isHealthy('zlink')]); // zlink: ZLinkHealthIndicator
  }
}

@Module({
  imports: [
    ZLinkModule.forRoot({ clientServer: { billing: { server: { listen: { port: 7200 } } } } }),
    TerminusModule,
  ],
  controllers: [MetricsController, HealthController],
  providers: [ZLinkHealthIndicator],
})
export class OpsModule {}
