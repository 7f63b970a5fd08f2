import { parseArgs } from 'node:util';
import { isZLinkError } from '../core/errors.js';
import { type AuditedRecord, openRecordsAudit } from '../store/index.js';

/**
 * `nestjs-zlink records`: lists what one deployment's stores keep in Redis and, with `--remove-stale`,
 * removes the records whose writers' leases are all gone (docs/operations.md#records-in-redis). A dry
 * run unless told: an operator sees what would go first. Resolves with what to print (on stdout with
 * code 0, on stderr with code 2: bad arguments, or a `--redis` that is a Redis Cluster node); rejects
 * when Redis cannot be reached, naming it.
 */
export async function recordsCommand(args: readonly string[]): Promise<{ text: string; code: number }> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        redis: { type: 'string' },
        'key-prefix': { type: 'string', default: 'zlink' },
        'relocation-key-prefix': { type: 'string', default: 'zlink-relocation' },
        'remove-stale': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    return { text: `${(error as Error).message}\n`, code: 2 };
  }
  const redis = values.redis;
  if (redis === undefined || !/^rediss?:\/\//.test(redis))
    return { text: '--redis <redis:// or rediss:// URL> is required\n', code: 2 };
  const audit = await openRecordsAudit(redis, values['key-prefix'], values['relocation-key-prefix']);
  try {
    const records = await audit.list();
    const removed = values['remove-stale'] ? await audit.removeStale(records) : undefined;
    const text = values.json ? `${JSON.stringify({ records, removed })}\n` : report(records, removed);
    return { text, code: 0 };
  } catch (error) {
    // The audit refuses a Cluster node before it reads or removes anything: a usage error.
    if (isZLinkError(error, 'InvalidArgument')) return { text: `--redis: ${error.message}\n`, code: 2 };
    throw error;
  } finally {
    await audit.close();
  }
}

function report(records: readonly AuditedRecord[], removed: number | undefined): string {
  const lines = records.map((r) =>
    [
      r.state.padEnd(5),
      r.kind.padEnd(10),
      r.key,
      r.writers.length > 0 ? `writer ${r.writers.join(',')}` : '',
      r.writerAlive === undefined ? '' : r.writerAlive ? 'lease alive' : 'lease gone',
      r.ttlMs === undefined ? 'no TTL' : `TTL ${r.ttlMs} ms`,
    ]
      .filter((part) => part !== '')
      .join('  '),
  );
  const count = (state: AuditedRecord['state']) => records.filter((r) => r.state === state).length;
  const stale = count('stale');
  lines.push(
    `${records.length} records: ${count('live')} live, ${stale} stale, ${count('kept')} kept`,
    removed === undefined
      ? stale > 0
        ? `dry run: --remove-stale removes the ${stale} stale`
        : 'nothing to remove'
      : `removed ${removed} of ${stale} stale`,
  );
  return `${lines.join('\n')}\n`;
}
