--[[
decide-many.lua: decides the messages of several producers in one call, each as decide-1.lua
alone would. Not a script by itself: src/limit/lua-scripts.ts puts decide-1.lua's text before
it as the body of `decide_key(KEYS, ARGV)`, so every producer is decided by the same code. For a
standalone Redis only: a Cluster keeps each producer's key in its own hash slot, and the keys
of one script must share one.

KEYS   one producer's state key each (as decide-1's KEYS[1])
ARGV   per key, in KEYS' order: n, then that key's n arguments (decide-1's ARGV[1 .. n])
Reply  per key, in KEYS' order: decide-1's reply
]]
local out = {}
local pos = 1
for i = 1, #KEYS do
  local n = tonumber(ARGV[pos])
  local args = {}
  for j = 1, n do args[j] = ARGV[pos + j] end
  pos = pos + n + 1
  out[i] = decide_key({ KEYS[i] }, args)
end
return out
