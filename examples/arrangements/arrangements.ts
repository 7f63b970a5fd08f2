// The arrangements' configuration, handlers and calls as docs/arrangements.md shows them: ClientServer,
// RouteMesh, classic fanout and the Location Store. Each `ZLinkModule.forRoot(...)` is what a module
// of that process imports; the file is compiled with the repository (typecheck), not run.
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import {
  ChannelHandler,
  FanoutHandler,
  NodeHandler,
  ZLinkContext,
  ZLinkFanoutClient,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkRuntime,
  type ZLinkFanoutContext,
  type ZLinkNodeMessageContext,
} from 'nestjs-zlink';

ZLinkModule.forRoot({
  clientServer: {
    billing: { server: { listen: { port: 7200, bindHost: '0.0.0.0' }, weight: 300 } }, // this process serves
    audit: { client: { connect: ['tcp://audit-1:7210', 'tcp://audit-2:7210'] } }, // this process calls
  },
  requestTimeoutMs: 5000,
});

@Injectable()
export class GameNode {
  // Node direct: the caller names this node. Each MeshName has its own packet namespace.
  @NodeHandler('game', 'node.status')
  status(@ZLinkPayload() q: unknown, @ZLinkContext() ctx: ZLinkNodeMessageContext) {
    return { node: 'play-a', asker: ctx.sourceRid }; // ctx.meshName === 'game', ctx.target === 'node'
  }

  // A channel this node serves (role 'server'): other nodes pick one Server by weight.
  @ChannelHandler('match', 'match.join')
  join(@ZLinkPayload() req: { player: string }) {
    return { room: 7, player: req.player };
  }
}

ZLinkModule.forRoot({
  meshes: {
    game: {
      rid: 'play-a', // NodeRid; defaults to <hostname>-<pid>-<random>-<mesh>
      listen: { port: 7300, bindHost: '0.0.0.0' },
      peers: ['tcp://play-b:7300', { endpoint: 'tcp://play-c:7300', rid: 'play-c' }], // rid: checked in the handshake
      channels: { match: { role: 'server', weight: 100 }, report: { role: 'client' } },
    },
  },
});

// elsewhere, with the ZLinkRouteClient and ZLinkRuntime Nest injects
export async function play(route: ZLinkRouteClient, runtime: ZLinkRuntime): Promise<void> {
  await route.requestToNode('game', 'play-b', 'node.status', {}).async(); // exactly play-b, or an error
  await route.requestToChannel('match', 'match.join', { player: 'p1' }).async(); // one remote Server by weight
  runtime.setChannelWeight('match', 0); // peers stop selecting this node; accepted work finishes
}

ZLinkModule.forRoot({
  fanout: {
    'system-events': {
      publisher: { listen: { port: 7212, bindHost: '0.0.0.0' }, sendHighWaterMark: 1000 }, // noDrop?: true
      subscriber: { connect: ['tcp://events-host:7212'], topics: ['maintenance', 'outage'] },
    },
  },
});

@Injectable()
export class Notices {
  @FanoutHandler('system-events', 'system.notice') // found by packet name
  notice(@ZLinkPayload() n: { text: string }, @ZLinkContext() ctx: ZLinkFanoutContext) {
    console.log(`${String(ctx.topic)}: ${n.text}`); // ctx.topic: the subscribed topic it came on
  }
}

// elsewhere: the topic defaults to the packet name; there is no metadata on fanout
export async function announce(fanout: ZLinkFanoutClient): Promise<void> {
  await fanout
    .publish('system-events', 'system.notice', { text: 'down at 2' }, { topic: 'maintenance' })
    .async();
}

ZLinkModule.forRoot({
  locationStore: {
    redis: 'redis://127.0.0.1:6379', // or ioredis options (Sentinel), or cluster: { nodes, options }
    keyPrefix: 'shop', // two stores may share one Redis
    lease: { ttlMs: 10000, refreshMs: 3000, refreshTimeoutMs: 2000, marginMs: 1000 }, // the defaults
    fullReadIntervalMs: 5000, // the safety net for lost change notifications
  },
  clientServer: { billing: { client: { discovery: 'auto' } } },
  meshes: { game: { discovery: 'auto', channels: { match: { role: 'client' } } } },
});
