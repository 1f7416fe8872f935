--[[
inspect-1.lua: read-only view of a producer's message bucket (sluice status).

KEYS[1]  the producer's state key (see decide-1.lua for the value's two forms)
ARGV[1]  now in epoch ms, or '' to read Redis TIME
ARGV[2]  the bound of the clamp: capacity + T of the current rule, in ms

Reply: { now, next }, integers; next = the next free slot (max of the bucket tats, clamped like
decide-1.lua), or 0 when the producer has no state.
]]
local now = tonumber(ARGV[1])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local raw = redis.call('GET', KEYS[1])
if not raw then return { now, 0 } end
local tat, btat = 0, 0
if string.find(raw, ';', 1, true) == nil then
  tat = tonumber(string.sub(raw, 1, -6))
else
  local parts = {}
  for part in string.gmatch(raw, '[^;]+') do parts[#parts + 1] = part end
  tat, btat = tonumber(parts[2]), tonumber(parts[3])
end
return { now, math.ceil(math.min(math.max(tat, btat), now + tonumber(ARGV[2]))) }
