/**
 * `nestjs-zlink/terminus`: the health indicator for `@nestjs/terminus` (an optional peer). Kept out
 * of the main barrel so `import 'nestjs-zlink'` never loads Terminus.
 */
export { ZLinkHealthIndicator } from './zlink-health.indicator.js';
export {
  HEALTH_STORE_TIMEOUT_MS,
  checkZLinkHealth,
  type ZLinkHealthChannel,
  type ZLinkHealthListener,
  type ZLinkHealthOptions,
  type ZLinkHealthReport,
} from '../../runtime/index.js';
