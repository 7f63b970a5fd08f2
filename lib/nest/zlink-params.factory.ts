import type { ParamsFactory } from '@nestjs/core';
import { ZLinkParamtype } from './decorators/zlink.constants.js';

/** Maps handler parameters to the `(payload, context)` a ZLink handler is called with. @internal */
export class ZLinkParamsFactory implements ParamsFactory {
  exchangeKeyForValue(type: number, data: unknown, args: unknown[] | undefined): unknown {
    if (!args) return null;
    switch (type as ZLinkParamtype) {
      case ZLinkParamtype.PAYLOAD: {
        const payload = args[0];
        if (data === undefined || data === null || data === '') return payload;
        return payload === null || payload === undefined
          ? undefined
          : (payload as Record<string, unknown>)[String(data)];
      }
      case ZLinkParamtype.CONTEXT:
        return args[1];
      case ZLinkParamtype.SESSION:
        return (args[1] as { session?: unknown } | undefined)?.session;
      default:
        return null;
    }
  }
}
