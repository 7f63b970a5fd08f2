import type { ZLinkSessionContext } from '../../../lib/core/index.js';
import type { ZLinkRuntime } from '../../../lib/index.js';
import { TEST_TLS } from '../../helpers/scripted-session-server.js';
import { gatewayOptions, startGateway } from './harness.js';

/** The test CA's server key and certificate, as a listener entry's `tls`. */
export const LISTENER_TLS = { key: TEST_TLS.key, cert: TEST_TLS.cert };

/**
 * A real gateway that plays test/helpers/scripted-session-server.ts's script, on the listener entries
 * given (`sessions.game.listen`): `echo` answers its message, `push` pushes it back as `pushed` and
 * answers `ok`, and `@OnSessionOpen` lets in the token `ticket` only. A client test runs against either.
 */
export function startScriptedGateway(listen: readonly Record<string, unknown>[]): Promise<ZLinkRuntime> {
  return startGateway(gatewayOptions({ listen }), {
    handlers: {
      echo: { fn: (p) => p },
      push: {
        fn: (p, ctx) => {
          (ctx as ZLinkSessionContext).session.push('pushed', p);
          return 'ok';
        },
      },
    },
    onOpen: (_session, hello) => (hello as { token: unknown }).token === 'ticket',
  });
}

/** `runtime.sessions.endpoints('game')`: every entry's endpoint, in order (docs/sessions.md). */
export function endpointsOf(runtime: ZLinkRuntime): string[] {
  return runtime.sessions.endpoints('game');
}
