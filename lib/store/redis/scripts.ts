/**
 * The Lua scripts of the Redis Location Store. Every key of one (kind, scope) shares a hash slot
 * (see `keys.ts`), so each script touches one slot and runs in a Cluster too. Time comes from the
 * Redis server (`TIME`), so every process judges lease expiry by one clock.
 */

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * The index decides whether a lease is alive (a key's own expiry can trail it by a millisecond): a
 * member whose lease has passed there is gone, whatever is left of its key.
 */
/**
 * The index lives as long as the longest lease it lists and no longer: a writer killed before it could
 * remove itself leaves no key behind for ever (its member is dropped by the next `LIST`, or with the index).
 */
const KEEP_INDEX = (leaseMs: string) =>
  `if redis.call('PTTL', KEYS[2]) < tonumber(${leaseMs}) then redis.call('PEXPIRE', KEYS[2], ${leaseMs}) end`;

const LIVE = `local score = redis.call('ZSCORE', KEYS[2], MEMBER)
local live = score and tonumber(score) > now`;

/** KEYS: descriptor, index. ARGV: revision, body, leaseMs, member, channel. 1 written, 0 stale. */
export const PUT = `
${NOW}
${LIVE.replace('MEMBER', 'ARGV[4]')}
local current = redis.call('HGET', KEYS[1], 'revision')
if live and current and tonumber(current) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'revision', ARGV[1], 'body', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[4])
${KEEP_INDEX('ARGV[3]')}
redis.call('PUBLISH', ARGV[5], ARGV[4])
return 1`;

/** KEYS: descriptor, index. ARGV: leaseMs, member. 1 extended, 0 gone. */
export const REFRESH = `
${NOW}
${LIVE.replace('MEMBER', 'ARGV[2]')}
if not live then
  redis.call('DEL', KEYS[1])
  return 0
end
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), ARGV[2])
${KEEP_INDEX('ARGV[1]')}
return 1`;

/** KEYS: descriptor, index. ARGV: member, channel. */
export const REMOVE = `
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1`;

/**
 * KEYS: index. ARGV: the descriptor key prefix of that slot. Drops index entries whose lease has
 * passed, then returns the bodies of the rest: one point in time (docs/protocol.md#discovery).
 */
export const LIST = `
${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local out = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local body = redis.call('HGET', ARGV[1] .. member, 'body')
  if body then out[#out + 1] = body end
end
return out`;
