/**
 * What Nest code sees of the runtime's events: the log lines an operator reads (which level, which
 * words, how often a repeated failure is written) and the rxjs streams (which events, and whether
 * asking for them makes the message path build per-message events). The log bridge over real
 * sockets is test/integration/nest/log-lines.spec.ts.
 */
import 'reflect-metadata';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { type ZLinkEvent, ZLinkEvents } from '../../../lib/core/observe/index.js';
import { ZLinkEventStream, fromZLinkEvents } from '../../../lib/nest/observability/zlink-event-stream.js';
import { ZLinkLogBridge } from '../../../lib/nest/observability/zlink-log-bridge.js';
import type { ZLinkRuntime } from '../../../lib/runtime/index.js';

const runtimeWith = (events: ZLinkEvents): ZLinkRuntime => ({ events }) as unknown as ZLinkRuntime;

const server = (type: 'server_ready' | 'server_lost', draining: boolean) =>
  ({
    type,
    channel: 'orders',
    serverRid: 's-1',
    generation: 'g',
    endpoint: 'tcp://10.0.0.1:7000',
    weight: 100,
    draining,
  }) as const;

const peerLost = (draining: boolean, reason?: string) =>
  ({
    type: 'peer_lost',
    mesh: 'game',
    rid: 'n-2',
    generation: 'g',
    memberships: [],
    draining,
    reason,
  }) as const;

const delivery = (result: 'ok' | 'no_handler' | 'handler_error' | 'drop', channel = 'orders') =>
  ({
    type: 'delivery',
    result,
    route: 'client-server',
    channel,
    packet: 'orders.get',
    reason: 'why',
  }) as const;

describe('ZLinkLogBridge', () => {
  const lines: [string, string][] = [];
  let events: ZLinkEvents;
  let bridge: ZLinkLogBridge;
  let now = 1_000_000;

  beforeEach(() => {
    lines.length = 0;
    for (const level of ['log', 'warn', 'error', 'debug'] as const)
      jest.spyOn(Logger.prototype, level).mockImplementation((text: unknown) => {
        lines.push([level, String(text)]);
      });
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    events = new ZLinkEvents();
    bridge = new ZLinkLogBridge(runtimeWith(events));
    bridge.onModuleInit();
  });

  afterEach(() => {
    bridge.onModuleDestroy();
    jest.restoreAllMocks();
  });

  const emitted = (...list: ZLinkEvent[]): [string, string][] => {
    for (const e of list) events.emit(e);
    return [...lines];
  };

  it('does not make the message path build per-message events', () => {
    expect(events.perMessage).toBe(false);
  });

  it("a server or peer that left after draining is 'log'; one lost without it is 'warn'", () => {
    expect(
      emitted(
        server('server_lost', true),
        server('server_lost', false),
        peerLost(true),
        peerLost(false, 'timeout'),
      ),
    ).toEqual([
      ['log', "server s-1 of 'orders' at tcp://10.0.0.1:7000 left after draining"],
      ['warn', "server s-1 of 'orders' at tcp://10.0.0.1:7000 lost"],
      ['log', "peer n-2 of mesh 'game' left after draining"],
      ['warn', "peer n-2 of mesh 'game' lost: timeout"],
    ]);
  });

  it('each line names what it is about: a channel, a channel on a mesh, a mesh or a session listener', () => {
    expect(
      emitted(
        { type: 'listening', channel: 'orders', endpoint: 'tcp://*:7000' },
        { type: 'listening', channel: 'orders', mesh: 'game', endpoint: 'tcp://*:7001' },
        { type: 'listening', mesh: 'game', endpoint: 'tcp://*:7002' },
        { type: 'listening', session: 'lobby', endpoint: 'tcp://*:7003' },
        // A session's delivery names its listener in `channel`.
        {
          type: 'delivery',
          result: 'no_handler',
          route: 'session',
          channel: 'lobby',
          packet: 'chat',
          reason: 'none',
        },
      ),
    ).toEqual([
      ['log', "'orders' listening on tcp://*:7000"],
      ['log', "'orders' on mesh 'game' listening on tcp://*:7001"],
      ['log', "mesh 'game' listening on tcp://*:7002"],
      ['log', "session listener 'lobby' listening on tcp://*:7003"],
      ['warn', "no_handler on session listener 'lobby' (chat): none"],
    ]);
  });

  it("a failed delivery is 'warn' when it is a deployment bug, 'debug' when it is traffic; a success is never logged", () => {
    expect(emitted(delivery('ok'), delivery('no_handler'), delivery('handler_error', 'billing'))).toEqual([
      ['warn', "no_handler on 'orders' (orders.get): why"],
      ['debug', "handler_error on 'billing' (orders.get): why"],
    ]);
  });

  it('writes a repeated failure of one kind at most once a second, counting the rest into the next line', () => {
    emitted(delivery('no_handler'), delivery('no_handler'), delivery('no_handler'));
    // Another kind, or the same kind elsewhere, is its own line.
    emitted(delivery('drop'), delivery('no_handler', 'billing'));
    now += 999;
    emitted(delivery('no_handler'));
    now += 1;
    emitted(delivery('no_handler'));
    now += 1000;
    emitted(delivery('no_handler'));
    expect(lines).toEqual([
      ['warn', "no_handler on 'orders' (orders.get): why"],
      ['debug', "drop on 'orders' (orders.get): why"],
      ['warn', "no_handler on 'billing' (orders.get): why"],
      ['warn', "no_handler on 'orders' (orders.get): why (+3 more since the last)"],
      ['warn', "no_handler on 'orders' (orders.get): why"],
    ]);
  });

  it("a refused peer is 'warn' only where this node's own peers named it", () => {
    expect(
      emitted(
        { type: 'peer_refused', mesh: 'game', endpoint: 'tcp://10.0.0.2:7000', reason: 'wrong mesh' },
        {
          type: 'peer_refused',
          mesh: 'game',
          endpoint: 'tcp://10.0.0.3:7000',
          reason: 'wrong mesh',
          discovered: true,
        },
        { type: 'peer_refused', mesh: 'game', rid: 'n-9', reason: 'object clients do not peer' },
      ),
    ).toEqual([
      ['warn', "peer at tcp://10.0.0.2:7000 of mesh 'game' refused: wrong mesh"],
      ['log', "peer at tcp://10.0.0.3:7000 of mesh 'game' refused: wrong mesh"],
      ['log', "hello from node 'n-9' of mesh 'game' refused: object clients do not peer"],
    ]);
  });

  it("a fenced lease is 'error' (business messages are refused); a store or discovery outage 'warn'", () => {
    const [fenced, failing, outage] = emitted(
      { type: 'lease', state: 'fenced' },
      { type: 'store', state: 'failing', reason: 'ECONNREFUSED' },
      { type: 'discovery', state: 'outage', kind: 'server', scope: 'orders', reason: 'timeout' },
    );
    expect(fenced?.[0]).toBe('error');
    expect(failing).toEqual(['warn', expect.stringContaining('ECONNREFUSED')]);
    expect(outage).toEqual(['warn', expect.stringContaining("discovery of servers in 'orders'")]);
  });

  it('writes nothing after the module is destroyed', () => {
    bridge.onModuleDestroy();
    expect(emitted(server('server_lost', false))).toEqual([]);
  });
});

describe('ZLinkEventStream and fromZLinkEvents', () => {
  const lost = server('server_lost', false);
  const ready = server('server_ready', false);

  it('events$ carries every event, one listener per subscription, removed on unsubscribe', () => {
    const events = new ZLinkEvents();
    const stream = new ZLinkEventStream(runtimeWith(events));
    const seen: ZLinkEvent[] = [];
    const subscription = stream.events$.subscribe((e) => seen.push(e));
    events.emit(ready);
    events.emit(delivery('ok'));
    subscription.unsubscribe();
    events.emit(lost);
    expect(seen).toEqual([ready, delivery('ok')]);
    expect(events.perMessage).toBe(false);
  });

  it('of(types) carries only those types, and leaves the message path cheap unless one is per-message', () => {
    const events = new ZLinkEvents();
    const stream = new ZLinkEventStream(runtimeWith(events));
    const seen: ZLinkEvent[] = [];
    const lifecycle = stream.of('server_lost', 'peer_lost').subscribe((e) => seen.push(e));
    expect(events.perMessage).toBe(false);
    events.emit(ready);
    events.emit(lost);
    events.emit(delivery('ok'));
    expect(seen).toEqual([lost]);
    const perMessage = stream.of('delivery').subscribe(() => undefined);
    expect(events.perMessage).toBe(true);
    perMessage.unsubscribe();
    lifecycle.unsubscribe();
    expect(events.perMessage).toBe(false);
  });

  it('fromZLinkEvents passes its subscribe options on', () => {
    const events = new ZLinkEvents();
    const cheap = fromZLinkEvents(events, { perMessage: false }).subscribe(() => undefined);
    expect(events.perMessage).toBe(false);
    cheap.unsubscribe();
  });
});
