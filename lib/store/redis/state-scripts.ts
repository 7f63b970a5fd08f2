/**
 * The Lua scripts of the Redis State Store (docs/decisions.md#the-redis-provider): each on one key, the
 * row's hash, so each runs on a Cluster too. The hash's fields:
 *
 * - `type`, `owner` (the last adopter's or writer's NodeRid): text;
 * - `epoch`, `version`, `schemaVersion`, `objectGeneration`, `authorityOwnerGeneration`, `savedAt`: decimal
 *   integers (`savedAt` in ms by the Redis server's `TIME`, so every process reads one clock);
 * - `state`, `timers`: the saved bytes as they came, absent when there are none.
 *
 * A tombstone is a row without `state` and `timers` whose key expires (`PEXPIRE`); any later write or adopt
 * makes it a live row again (`PERSIST`). A row whose fields are missing or not integers is refused
 * `unreadable`, and left as it is: never read as absent, never written over.
 */

/** `now`: the server's clock in ms, as digits (no float formatting on the way). */
const NOW = `local t = redis.call('TIME')
local now = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))`;

/**
 * `row`: the fields below of KEYS[1] (HMGET), `absent`, and `problem`: why the row cannot be read, or nil.
 * Integers have at most 15 digits, so Lua's doubles hold them exactly.
 */
const READ = (fields: string) => `
local row = redis.pcall('HMGET', KEYS[1], 'type', 'epoch', 'version', 'schemaVersion', 'objectGeneration',
  'savedAt'${fields})
local absent = not row.err and not row[2] and redis.call('EXISTS', KEYS[1]) == 0
local problem
if row.err then
  problem = 'the key holds a ' .. redis.call('TYPE', KEYS[1]).ok .. ', not a hash'
elseif not absent then
  if not row[1] or row[1] == '' then problem = 'type is missing' end
  local names = {'epoch', 'version', 'schemaVersion', 'objectGeneration', 'savedAt'}
  for i = 2, 6 do
    if not problem and not (row[i] and #row[i] <= 15 and string.find(row[i], '^%d+$')) then
      problem = names[i - 1] .. ' is not a decimal integer'
    end
  end
  if not problem and tonumber(row[2]) < 1 then problem = 'epoch is 0' end
end`;

/** Adopt replies, first element. */
export const ADOPTED = 1;
export const ADOPT_NEWER_OWNER = 2;
export const ADOPT_UNREADABLE = 3;

/**
 * KEYS: the row. ARGV: type, objectGeneration, owner NodeRid, force ('1' or '0').
 * Returns {1, type, epoch, version, schemaVersion, savedAt, state or nil, timers or nil} adopted (a row
 * created when absent: epoch 1, version 0), {2, objectGeneration} refused for the row's larger last
 * adopter, {3, why} unreadable.
 */
export const STATE_ADOPT = `
${NOW}
${READ(", 'state', 'timers'")}
if absent then
  redis.call('HSET', KEYS[1], 'type', ARGV[1], 'epoch', '1', 'version', '0', 'schemaVersion', '0',
    'objectGeneration', ARGV[2], 'authorityOwnerGeneration', '0', 'owner', ARGV[3], 'savedAt', now)
  return {${ADOPTED}, ARGV[1], 1, 0, 0, tonumber(now), false, false}
end
if problem then return {${ADOPT_UNREADABLE}, problem} end
if tonumber(row[5]) > tonumber(ARGV[2]) and ARGV[4] ~= '1' then
  return {${ADOPT_NEWER_OWNER}, tonumber(row[5])}
end
local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
redis.call('HSET', KEYS[1], 'objectGeneration', ARGV[2], 'owner', ARGV[3])
redis.call('PERSIST', KEYS[1])
return {${ADOPTED}, row[1], epoch, tonumber(row[3]), tonumber(row[4]), tonumber(row[6]), row[7] or false,
  row[8] or false}`;

/** Write replies, first element. */
export const WRITTEN = 1;
export const WRITE_FENCED = 2;
export const WRITE_VERSION = 3;
export const WRITE_ABSENT = 4;
export const WRITE_UNREADABLE = 5;

/**
 * KEYS: the row. ARGV: epoch, expected version, the new version (expected + 1), type, schemaVersion,
 * objectGeneration, authorityOwnerGeneration, NodeRid, tombstone TTL in ms ('0': a live write), state
 * (bytes; '' for a tombstone), timers (bytes; '' for none).
 * Returns {1, version} written, {2, epoch} fenced, {3, version} another version, {4} absent,
 * {5, why} unreadable.
 */
export const STATE_WRITE = `
${NOW}
${READ('')}
if absent then return {${WRITE_ABSENT}} end
if problem then return {${WRITE_UNREADABLE}, problem} end
if tonumber(row[2]) ~= tonumber(ARGV[1]) then return {${WRITE_FENCED}, tonumber(row[2])} end
if tonumber(row[3]) ~= tonumber(ARGV[2]) then return {${WRITE_VERSION}, tonumber(row[3])} end
local fields = {'type', ARGV[4], 'version', ARGV[3], 'schemaVersion', ARGV[5], 'objectGeneration', ARGV[6],
  'authorityOwnerGeneration', ARGV[7], 'owner', ARGV[8], 'savedAt', now}
local ttl = tonumber(ARGV[9])
if ttl > 0 then
  redis.call('HSET', KEYS[1], unpack(fields))
  redis.call('HDEL', KEYS[1], 'state', 'timers')
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  fields[#fields + 1] = 'state'
  fields[#fields + 1] = ARGV[10]
  if ARGV[11] ~= '' then
    fields[#fields + 1] = 'timers'
    fields[#fields + 1] = ARGV[11]
  end
  redis.call('HSET', KEYS[1], unpack(fields))
  if ARGV[11] == '' then redis.call('HDEL', KEYS[1], 'timers') end
  redis.call('PERSIST', KEYS[1])
end
return {${WRITTEN}, tonumber(ARGV[3])}`;

/**
 * A whole batch of one of the scripts above in one call, for a single Redis (standalone or Sentinel): the
 * row's script runs as a function for each key in turn, KEYS[i] with the arguments of row i, and the reply
 * is the list of the rows' replies, in order. Still one atomic compare-and-set per row; one call instead
 * of one per row. The rows' arguments come as ONE msgpack argument (`packScriptRows`: an array per row,
 * read by `cmsgpack`, built into Redis's Lua), so the writing process encodes one command argument per
 * row (its key) plus one, not twelve per row. Not on a Cluster: a batch's keys may
 * sit on any node.
 */
export function batchOf(one: string): string {
  return `
local function one(KEYS, ARGV)
${one}
end
local rows = cmsgpack.unpack(ARGV[1])
local out = {}
for i = 1, #KEYS do
  out[i] = one({KEYS[i]}, rows[i])
end
return out`;
}

export const STATE_ADOPT_BATCH = batchOf(STATE_ADOPT);
export const STATE_WRITE_BATCH = batchOf(STATE_WRITE);
