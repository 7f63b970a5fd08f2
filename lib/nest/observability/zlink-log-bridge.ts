import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { ZLinkEvent } from '../../core/observe/index.js';
import { ZLinkRuntime } from '../../runtime/index.js';

type Level = 'log' | 'warn' | 'error' | 'debug';

/** A repeated failure of one kind is logged at most this often; the rest are counted into the next line. */
const REPEAT_MS = 1000;

/**
 * Lifecycle logs through Nest's Logger (context `ZLink`), so the application's logger and its
 * levels apply: listeners, servers and peers coming and going, discovery outages, fencing, drain.
 * Per-message failures are logged too, at most once a second per kind (metrics count every one);
 * per-message successes never are. Every line names the channel, mesh or session listener it is
 * about. `warn` and `error` are kept for what an operator must act on: a server or peer that left
 * after draining (a graceful stop) is `log`, one lost without it `warn`; a refused peer `warn` only
 * where this node's own `peers` named it.
 */
@Injectable()
export class ZLinkLogBridge implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ZLink');
  private readonly repeats = new Map<string, { at: number; suppressed: number }>();
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly runtime: ZLinkRuntime) {}

  onModuleInit(): void {
    this.unsubscribe = this.runtime.events.subscribe((e) => this.write(e), { perMessage: false });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  private write(e: ZLinkEvent): void {
    const line = describe(e);
    if (!line) return;
    const [level, text, repeatKey] = line;
    if (repeatKey !== undefined) {
      const now = Date.now();
      const seen = this.repeats.get(repeatKey);
      if (seen && now - seen.at < REPEAT_MS) {
        seen.suppressed++;
        return;
      }
      const more = seen && seen.suppressed > 0 ? ` (+${seen.suppressed} more since the last)` : '';
      this.repeats.set(repeatKey, { at: now, suppressed: 0 });
      this.logger[level](text + more);
      return;
    }
    this.logger[level](text);
  }
}

function where(e: { channel?: string; mesh?: string; session?: string; route?: string }): string {
  if (e.session !== undefined) return `session listener '${e.session}'`;
  // A session's delivery names its listener in `channel`.
  if (e.route === 'session' && e.channel !== undefined) return `session listener '${e.channel}'`;
  if (e.channel !== undefined && e.mesh !== undefined) return `'${e.channel}' on mesh '${e.mesh}'`;
  if (e.channel !== undefined) return `'${e.channel}'`;
  return e.mesh !== undefined ? `mesh '${e.mesh}'` : 'ZLink';
}

/** Level, text and (for per-message failures) the key that rate-limits it; `undefined`: not logged. */
function describe(e: ZLinkEvent): [Level, string, string?] | undefined {
  switch (e.type) {
    case 'listening':
      return ['log', `${where(e)} listening on ${e.endpoint}`];
    case 'server_ready':
      return ['log', `server ${e.serverRid} of '${e.channel}' ready at ${e.endpoint} (weight ${e.weight})`];
    case 'server_lost':
      return e.draining
        ? ['log', `server ${e.serverRid} of '${e.channel}' at ${e.endpoint} left after draining`]
        : ['warn', `server ${e.serverRid} of '${e.channel}' at ${e.endpoint} lost`];
    case 'server_state':
      return ['debug', `server ${e.serverRid} of '${e.channel}': weight ${e.weight}, draining ${e.draining}`];
    case 'peer_ready':
      return ['log', `peer ${e.rid} of mesh '${e.mesh}' ready`];
    case 'peer_lost': {
      const why = e.reason ? `: ${e.reason}` : '';
      return e.draining
        ? ['log', `peer ${e.rid} of mesh '${e.mesh}' left after draining${why}`]
        : ['warn', `peer ${e.rid} of mesh '${e.mesh}' lost${why}`];
    }
    case 'peer_state':
      return ['debug', `peer ${e.rid} of mesh '${e.mesh}' changed its memberships`];
    case 'peer_refused':
      return peerRefused(e);
    case 'security_refused': {
      const peer = e.peerRid !== undefined ? ` (${e.peerRid}${e.endpoint ? ` at ${e.endpoint}` : ''})` : '';
      const text = `connection refused on ${where(e)}${peer}: ${e.reason}: ${e.detail}`;
      return ['warn', text, `security_refused:${e.reason}:${where(e)}`];
    }
    case 'lease':
      return e.state === 'fenced'
        ? ['error', 'owner lease not refreshed in time: fenced, new business messages are refused']
        : ['log', 'owner lease held'];
    case 'store':
      return e.state === 'failing'
        ? ['warn', `the store does not answer (${e.reason ?? ''}); cached object routes go once it does`]
        : ['log', 'the store answers again: cached object routes dropped'];
    case 'discovery':
      return discovery(e);
    case 'fanout_publisher':
      return e.state === 'silent'
        ? ['warn', `fanout publisher of '${e.channel}' at ${e.endpoint} is silent`]
        : ['log', `fanout publisher of '${e.channel}' at ${e.endpoint} is alive`];
    case 'drain':
      return [e.phase === 'deadline' ? 'warn' : 'log', `drain of ${where(e)} ${e.phase}`];
    case 'protocol_error':
      return ['warn', `protocol error on ${where(e)}: ${e.reason}`, `protocol_error:${where(e)}`];
    case 'delivery': {
      if (e.result === 'ok') return undefined;
      // A missing handler or an unencodable reply is a deployment bug; the others are traffic.
      const loud = e.result === 'no_handler' || e.result === 'reply_error' || e.result === 'decode_error';
      const text = `${e.result} on ${where(e)}${e.packet ? ` (${e.packet})` : ''}: ${e.reason ?? ''}`;
      return [loud ? 'warn' : 'debug', text, `delivery:${e.result}:${where(e)}`];
    }
    default:
      return undefined;
  }
}

/**
 * Where this node's `peers` named the node, the refusal is a configuration to fix (`warn`); a link
 * discovery opened, or another node's hello, needs nothing of this node's operator (`log`).
 */
function peerRefused(e: ZLinkEvent & { type: 'peer_refused' }): [Level, string] {
  const mesh = `mesh '${e.mesh}'`;
  if (e.endpoint === undefined)
    return ['log', `hello from node '${e.rid ?? '?'}' of ${mesh} refused: ${e.reason}`];
  return [e.discovered ? 'log' : 'warn', `peer at ${e.endpoint} of ${mesh} refused: ${e.reason}`];
}

function discovery(e: ZLinkEvent & { type: 'discovery' }): [Level, string] {
  const what = `discovery of ${e.kind}s in '${e.scope}'`;
  switch (e.state) {
    case 'outage':
      return [
        'warn',
        `${what}: the Location Store does not answer; the last list is kept (${e.reason ?? ''})`,
      ];
    case 'recovered':
      return ['log', `${what}: the Location Store answers again (${e.count ?? 0} found)`];
    case 'rejected':
      return ['error', `${what}: a read could not be applied: ${e.reason ?? ''}`];
    default:
      return ['debug', `${what}: ${e.count ?? 0} found`];
  }
}
