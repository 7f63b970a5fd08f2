/**
 * The Lua scripts of the Redis object stores (Authority, Relocation). Every key of one (store, mesh)
 * shares a hash slot (see `object-keys.ts`), so each script touches one slot and runs in a Cluster
 * too. Time comes from the Redis server (`TIME`), so every process reads one clock.
 */

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** KEYS: record. Returns {now} when absent, else {now, version, body, writtenAt}. */
export const OBJECT_GET = `
${NOW}
local cur = redis.call('HMGET', KEYS[1], 'version', 'body', 'writtenAt')
if not cur[1] then return {now} end
return {now, cur[1], cur[2], cur[3]}`;

/**
 * The one compare-and-swap of both stores; a delete is a swap to nothing (empty body).
 * KEYS: record, version counter, the Location Store's MeshNode index of the mesh (when lease members
 * are named; the counter again otherwise). ARGV: expected version or 'absent', body ('' deletes),
 * index key prefix, member, the lease members of node runs that must all be gone (space-separated, ''
 * for none: a takeover names the previous owner, `nestjs-zlink records` a move's two ends), the TTL in
 * ms of what this write touches (0: none), then the index names the new record is listed under.
 * Returns {1, now, version} when written, {1, now} when deleted, {0, now[, version, body, writtenAt]}
 * when the stored version was not the expected one (with what is stored, if anything), {2, now} when
 * a node run named still holds a live lease (refused; nothing written).
 *
 * The version comes from the mesh's counter, not from the record, so it keeps growing across a
 * delete and re-create: a reader holding an old record's version never matches a new record. The
 * lease is judged by the index score, as the Location Store's own scripts judge it. With a TTL, the
 * record, the counter and the indexes it is listed in all expire that long after the mesh's last write
 * (the counter with the last record, so a version is never reused while a record that had it exists).
 */
export const OBJECT_CAS = `
${NOW}
local cur = redis.call('HMGET', KEYS[1], 'version', 'body', 'writtenAt', 'index')
local matches
if ARGV[1] == 'absent' then matches = not cur[1] else matches = cur[1] == ARGV[1] end
if not matches then
  if cur[1] then return {0, now, cur[1], cur[2], cur[3]} end
  return {0, now}
end
for member in string.gmatch(ARGV[5], '%S+') do
  local lease = redis.call('ZSCORE', KEYS[3], member)
  if lease and tonumber(lease) > now then return {2, now} end
end
if cur[4] then
  for name in string.gmatch(cur[4], '%S+') do redis.call('SREM', ARGV[3] .. name, ARGV[4]) end
end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
  return {1, now}
end
local version = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'version', version, 'body', ARGV[2], 'writtenAt', now,
  'index', table.concat(ARGV, ' ', 7))
local ttl = tonumber(ARGV[6])
for i = 7, #ARGV do
  redis.call('SADD', ARGV[3] .. ARGV[i], ARGV[4])
  if ttl > 0 then redis.call('PEXPIRE', ARGV[3] .. ARGV[i], ttl) end
end
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return {1, now, version}`;

/**
 * KEYS: one NodeRid's index. ARGV: the record key prefix of that slot. Returns {now, then member,
 * version, body, writtenAt for every listed record}: one point in time.
 */
export const OBJECT_LIST = `
${NOW}
local out = {now}
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local cur = redis.call('HMGET', ARGV[1] .. member, 'version', 'body', 'writtenAt')
  if cur[1] then
    out[#out + 1] = member
    out[#out + 1] = cur[1]
    out[#out + 1] = cur[2]
    out[#out + 1] = cur[3]
  end
end
return out`;
