import type { RecordsAudit } from './redis/records-audit.js';
import type { RedisConnectionOptions } from './redis/client.js';

/**
 * The records of one deployment on Redis, for `nestjs-zlink records` (docs/operations.md#records-in-redis):
 * its Location Store key prefix (descriptors, authority records) and Relocation Store key prefix.
 * ioredis is loaded here, on first use.
 */
export async function openRecordsAudit(
  redis: RedisConnectionOptions['redis'],
  keyPrefix: string,
  relocationPrefix: string,
): Promise<RecordsAudit> {
  const { RecordsAudit } = await import('./redis/records-audit.js');
  return new RecordsAudit({ redis }, keyPrefix, relocationPrefix);
}
