--[[
budget-exchange-2.lua: one replica's cadence of the downstream budget (src/budget/budget-store.ts).
Writes this replica's demand report, drops the reports of replicas that stopped reporting, reads
every live report, and (with `follow`) takes at most one AIMD step of the followed budget per
step interval across all replicas. Time is Redis TIME.

KEYS[1]  the reports hash: field = replica id, value = '<expires at ms>|<payload>'
KEYS[2]  the followed budget: hash { rate, at }
ARGV[1]  replica id
ARGV[2]  report ttl in ms (a replica that stops reporting loses its claim after it)
ARGV[3]  payload (JSON, checked by the reader)
ARGV[4]  the lag verdict read since this replica's last call: '1' over maxLag, '0' within it, '' none
ARGV[5]  the configured budget rate (messages/s), or '' when the budget follows nothing
ARGV[6]  decrease factor (e.g. 0.8)
ARGV[7]  increase step (messages/s)
ARGV[8]  floor (messages/s)
ARGV[9]  step interval in ms

Reply: { now, followed rate or '', payload_1, ..., payload_n } (strings)
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d', now + ttl) .. '|' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl * 4)
local all = redis.call('HGETALL', KEYS[1])
local out = { string.format('%d', now), '' }
for i = 1, #all, 2 do
  local value = all[i + 1]
  local sep = string.find(value, '|', 1, true)
  local expires = sep and tonumber(string.sub(value, 1, sep - 1))
  if expires == nil or expires < now then
    redis.call('HDEL', KEYS[1], all[i])
  else
    out[#out + 1] = string.sub(value, sep + 1)
  end
end
if ARGV[5] ~= '' then
  local rate = tonumber(ARGV[5])
  local current = math.min(tonumber(redis.call('HGET', KEYS[2], 'rate') or '') or rate, rate)
  local at = tonumber(redis.call('HGET', KEYS[2], 'at') or '') or 0
  if ARGV[4] ~= '' and now - at >= tonumber(ARGV[9]) then
    if ARGV[4] == '1' then
      current = math.max(tonumber(ARGV[8]), current * tonumber(ARGV[6]))
    else
      current = math.min(rate, current + tonumber(ARGV[7]))
    end
    redis.call('HSET', KEYS[2], 'rate', string.format('%.17g', current), 'at', string.format('%d', now))
  end
  redis.call('PEXPIRE', KEYS[2], 3600000)
  out[2] = string.format('%.17g', current)
end
return out
