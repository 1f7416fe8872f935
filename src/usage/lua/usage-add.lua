--[[
usage-add.lua: adds one producer's counts of the last second(s) to its usage history, in one
atomic call. All keys share the producer's hash tag (one Redis Cluster slot); the caller passes
the key count (one key per resolution and segment touched, usually one per resolution).

KEYS[i]   a segment hash: <keyPrefix>{<producer>}:usage:<resolution>:<segment> (usage-keys.ts)
ARGV      for each key i, in order: expireAt (epoch ms), n, then n pairs field, increment
          (field = <offset in the segment><counter letter>, increment a positive integer)

Reply: the number of fields incremented. Every write sets the segment's expiry to the same
instant (retention after its last bucket ends), so replicas agree; a segment whose expiry has
already passed is deleted again at once by PEXPIREAT: late counts never resurrect it.
]]
local a = 1
local written = 0
for i = 1, #KEYS do
  local expire_at = ARGV[a]
  local n = tonumber(ARGV[a + 1])
  a = a + 2
  for j = 0, n - 1 do
    redis.call('HINCRBY', KEYS[i], ARGV[a + 2 * j], ARGV[a + 2 * j + 1])
  end
  redis.call('PEXPIREAT', KEYS[i], expire_at)
  written = written + n
  a = a + 2 * n
end
return written
