--[[
decide-many.lua: decides the messages of several producers in one call, each as decide-1.lua
alone would. Not a script by itself: src/limit/lua-scripts.ts puts decide-1.lua's text before
it as the body of `decide_key(KEYS, ARGV)`, so every producer is decided by the same code. For a
standalone Redis only: a Cluster keeps each producer's key in its own hash slot, and the keys
of one script must share one.

What all keys share is sent once (a round's producers mostly share a rule and always an
instant: a call's arguments cost the caller's client more than the script costs Redis).

KEYS   one producer's state key each (as decide-1's KEYS[1])
ARGV   [1] now and [2] not after, for every key (decide-1's ARGV[1] and ARGV[9]);
       [3] r, the number of rules, then r × 6: each rule's decide-1 ARGV[2 .. 7];
       then per key, in KEYS' order: its rule (1 .. r), k, as of, lease (decide-1's ARGV[8],
       ARGV[10], ARGV[11]), then k sizes when its rule has a byte bucket (decide-1's ARGV[12 ..])
Reply  per key, in KEYS' order: decide-1's reply
]]
local now, notAfter = ARGV[1], ARGV[2]
local rules = {}
local pos = 4
for r = 1, tonumber(ARGV[3]) do
  rules[r] = { ARGV[pos], ARGV[pos + 1], ARGV[pos + 2], ARGV[pos + 3], ARGV[pos + 4], ARGV[pos + 5] }
  pos = pos + 6
end
local out = {}
for i = 1, #KEYS do
  local rule = rules[tonumber(ARGV[pos])]
  local k = ARGV[pos + 1]
  local args = { now, rule[1], rule[2], rule[3], rule[4], rule[5], rule[6], k, notAfter, ARGV[pos + 2], ARGV[pos + 3] }
  pos = pos + 4
  if rule[5] ~= '' then
    for j = 1, tonumber(k) do args[11 + j] = ARGV[pos + j - 1] end
    pos = pos + tonumber(k)
  end
  out[i] = decide_key({ KEYS[i] }, args)
end
return out
