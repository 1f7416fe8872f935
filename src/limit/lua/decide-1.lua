--[[
decide-1.lua: decides k ordered messages of one producer against its rule in one atomic step.
The Lua twin of src/limit/algorithms/*.ts (same operations in the same order, so both stores
compute the same doubles); see docs/design.md "Semantics of the limiter".

KEYS[1]  the producer's state key: <keyPrefix>{<brace-free producer id>}
ARGV[1]  now in epoch ms, or '' to read Redis TIME
ARGV[2]  rule fingerprint: 5 decimal digits
ARGV[3]  algorithm: 'l' leaky bucket, 't' token bucket
ARGV[4]  T, ms per message (may be fractional)
ARGV[5]  capacity in ms (leaky: queue; token: (burst - 1) * T)
ARGV[6]  ms per byte, or '' when the rule has no byte bucket
ARGV[7]  windows 'max:windowMs:kind' joined by ',' (kind l = log, s = sliding, f = fixed), or ''
ARGV[8]  k, the number of messages
ARGV[9]  not after: the latest instant (epoch ms, same clock as now) the decision may be taken,
         or '' for none. A call that runs later (it waited behind a stalled Redis and its caller
         has given up) changes nothing and replies { now, -1 }.
ARGV[10] as of: a retry's earlier turn, from which its buckets' slots are counted (a slot left
         free since can be taken), or '' for now; now when the key is gone. The state is read
         and clamped at now and every limit admits at now, so no reservation made since is
         taken back. A leaky bucket with refusals outstanding (tail ahead of now) counts from
         CATCH_UP ms before now at the latest: a backlogged producer's next message takes a
         slot a stall left free.
ARGV[11] lease: slots wanted after the messages, or '' for none (docs/design.md "Leased slots").
         Granted to a leaky bucket of count alone (no bytes, no windows) when nothing is refused
         and the bucket's next free slot lies at most T ahead: that many slots from it (or now),
         T apart, charged now.
ARGV[12 .. 11+k]  the message sizes in bytes (only when ARGV[6] is not '')

Reply: { now, code_1, at_1, ..., code_k, at_k }, integers, then { start, count } when a lease was
granted. code 0: admitted, released at `at` (leaky: R; token: the as-of instant); code 1: refused
by the rate, 2: by bytes, 2 + j: by window j (1-based), with notBefore `at`.

State (one string value; PX = when the buckets are empty and the windows over):
  compact   '<integer tat><fingerprint>'  when there is nothing but an integer tat
  general   'fp;tat;btat;tail;w_1;...;w_n'  with w = kind:windowMs:data
            log: t,t,...   fixed: index,count   sliding: index,count,index,count,...
]]
local SLOTS = 10
local MAX_MESSAGE_BYTES = 16777216
-- CATCH_UP_MS in src/limit/algorithms/decide-batch.ts
local CATCH_UP = 1000

local function fmt(x)
  return string.format('%.17g', x)
end

local function numbers(text)
  local out = {}
  for part in string.gmatch(text or '', '[^,]+') do out[#out + 1] = tonumber(part) end
  return out
end

local now = tonumber(ARGV[1])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local notAfter = tonumber(ARGV[9])
if notAfter ~= nil and now > notAfter then return { now, -1 } end
local fp, algorithm = ARGV[2], ARGV[3]
local T, cap = tonumber(ARGV[4]), tonumber(ARGV[5])
local byteT = tonumber(ARGV[6])
local k = tonumber(ARGV[8])
local asOf = tonumber(ARGV[10]) or now

-- the rule's windows
local limits = {}
for spec in string.gmatch(ARGV[7], '[^,]+') do
  local max, w, kind = string.match(spec, '^([^:]+):([^:]+):(%a)$')
  limits[#limits + 1] = { max = tonumber(max), w = tonumber(w), kind = kind }
end

-- read the stored state
local raw = redis.call('GET', KEYS[1])
local sfp, tat, btat, tail, stored = nil, 0, 0, 0, {}
if raw then
  if string.find(raw, ';', 1, true) == nil then
    sfp, tat = string.sub(raw, -5), tonumber(string.sub(raw, 1, -6))
  else
    local parts = {}
    for part in string.gmatch(raw, '[^;]+') do parts[#parts + 1] = part end
    sfp, tat, btat, tail = parts[1], tonumber(parts[2]), tonumber(parts[3]), tonumber(parts[4])
    for i = 5, #parts do
      local kind, w, data = string.match(parts[i], '^(%a):([^:]+):(.*)$')
      stored[#stored + 1] = { kind = kind, w = tonumber(w), data = numbers(data) }
    end
  end
end

-- a forgotten key says nothing of the time before now: slots are counted from now
if not raw then asOf = now end

-- clamp to what the current rule can produce; another rule restarts the tail
tat = math.min(tat, now + cap + T)
if byteT then btat = math.min(btat, now + cap + MAX_MESSAGE_BYTES * byteT) else btat = 0 end
if sfp ~= fp then tail = 0 end

-- a backlogged producer (refusals outstanding) takes a slot left free in the last CATCH_UP ms
if algorithm == 'l' and tail > now then asOf = math.min(asOf, now - CATCH_UP) end

-- windows: matched by kind and length, pruned at now
local ws = {}
for j, lim in ipairs(limits) do
  local data = {}
  for _, s in ipairs(stored) do
    if s.kind == lim.kind and s.w == lim.w then data = s.data break end
  end
  local st = {}
  if lim.kind == 'l' then
    for _, t in ipairs(data) do
      if t > now - lim.w then st[#st + 1] = math.min(t, now) end
    end
  elseif lim.kind == 'f' then
    local index = math.floor(now / lim.w)
    st.index, st.count = data[1] or 0, data[2] or 0
    if st.index < index then st.index, st.count = index, 0 elseif st.index > index then st.index = index end
  else
    local current = math.floor(now / (lim.w / SLOTS))
    for i = 1, #data, 2 do
      local index, count = data[i], data[i + 1]
      if index >= current - SLOTS then
        local at = math.min(index, current)
        if #st > 0 and st[#st - 1] == at then st[#st] = st[#st] + count
        else st[#st + 1] = at; st[#st + 1] = count end
      end
    end
  end
  ws[j] = st
end

local function window_check(lim, st)
  if lim.kind == 'l' then
    if #st < lim.max then return nil end
    return st[#st - lim.max + 1] + lim.w
  elseif lim.kind == 'f' then
    if st.count < lim.max then return nil end
    return (st.index + 1) * lim.w
  end
  local total = 0
  for i = 2, #st, 2 do total = total + st[i] end
  if total < lim.max then return nil end
  for i = 1, #st, 2 do
    total = total - st[i + 1]
    if total < lim.max then return (st[i] + SLOTS + 1) * (lim.w / SLOTS) end
  end
  return nil
end

local function window_charge(lim, st)
  if lim.kind == 'l' then st[#st + 1] = now
  elseif lim.kind == 'f' then st.count = st.count + 1
  else
    local current = math.floor(now / (lim.w / SLOTS))
    if #st > 0 and st[#st - 1] == current then st[#st] = st[#st] + 1
    else st[#st + 1] = current; st[#st + 1] = 1 end
  end
end

-- one message: returns code, at, notBefore candidate and spread of the refusal
local function decide_one(size)
  local refusals = {}
  local at = asOf
  if algorithm == 'l' then
    at = math.max(asOf, tat, btat)
    if at - now > cap then
      if byteT and btat > tat then refusals[1] = { 2, at - cap, size * byteT }
      else refusals[1] = { 1, at - cap, T } end
    end
  else
    if tat - now > cap then refusals[#refusals + 1] = { 1, tat - cap, T } end
    if byteT and btat - now > cap then refusals[#refusals + 1] = { 2, btat - cap, size * byteT } end
  end
  for j, lim in ipairs(limits) do
    local nb = window_check(lim, ws[j])
    if nb then refusals[#refusals + 1] = { 2 + j, nb, lim.w / lim.max } end
  end
  if #refusals == 0 then
    if algorithm == 'l' then
      tat = at + T
      if byteT then btat = at + size * byteT end
    else
      tat = math.max(tat, asOf) + T
      if byteT then btat = math.max(btat, asOf) + size * byteT end
    end
    for j, lim in ipairs(limits) do window_charge(lim, ws[j]) end
    return nil, at
  end
  local best = refusals[1]
  for _, r in ipairs(refusals) do
    if r[2] > best[2] then best = r end
  end
  return best
end

-- How far past a refusal's own instant the tail may spread it (TAIL_HORIZON_MS in
-- src/limit/algorithms/decide-batch.ts): refusals beyond come back together at the horizon.
local TAIL_HORIZON = 3600000

local function refuse(refusal, size)
  local nb = math.max(refusal[2], math.min(tail, refusal[2] + TAIL_HORIZON))
  local spread = refusal[3]
  if refusal[1] == 2 then spread = size * byteT end
  tail = nb + spread
  return math.ceil(nb)
end

local reply = { now }
local first = nil
for i = 1, k do
  local size = tonumber(ARGV[11 + i]) or 0
  if first then
    reply[#reply + 1] = first[1]
    reply[#reply + 1] = refuse(first, size)
  else
    local refusal, at = decide_one(size)
    if refusal then
      first = refusal
      reply[#reply + 1] = refusal[1]
      reply[#reply + 1] = refuse(refusal, size)
    else
      reply[#reply + 1] = 0
      reply[#reply + 1] = math.ceil(at)
    end
  end
end

-- the lease (grantLease in src/limit/algorithms/decide-batch.ts; 1: its LEASE_AT_ONCE_MS)
local wanted = tonumber(ARGV[11])
if wanted and wanted >= 1 and algorithm == 'l' and not byteT and #limits == 0 and tail <= now and tat <= now + math.max(T, 1) then
  local start = math.max(tat, now)
  tat = start + wanted * T
  reply[#reply + 1] = math.ceil(start)
  reply[#reply + 1] = wanted
end

-- write back, expiring when the buckets are empty and the windows over
local expires = math.max(tat, btat, tail)
local out = {}
for j, lim in ipairs(limits) do
  local st, data, ends = ws[j], nil, 0
  if lim.kind == 'l' then
    local texts = {}
    for i, t in ipairs(st) do texts[i] = fmt(t) end
    data = table.concat(texts, ',')
    if #st > 0 then ends = st[#st] + lim.w end
  elseif lim.kind == 'f' then
    data = fmt(st.index) .. ',' .. fmt(st.count)
    if st.count > 0 then ends = (st.index + 1) * lim.w end
  else
    local texts = {}
    for i, v in ipairs(st) do texts[i] = fmt(v) end
    data = table.concat(texts, ',')
    if #st > 0 then ends = (st[#st - 1] + SLOTS + 1) * (lim.w / SLOTS) end
  end
  out[#out + 1] = lim.kind .. ':' .. fmt(lim.w) .. ':' .. data
  expires = math.max(expires, ends)
end

local ttl = math.max(1, math.ceil(expires - now))
if tail <= now then tail = 0 end
if #limits == 0 and btat == 0 and tail == 0 and tat >= 0 and tat == math.floor(tat) and tat < 1e15 then
  redis.call('SET', KEYS[1], string.format('%d', tat) .. fp, 'PX', ttl)
else
  local head = fp .. ';' .. fmt(tat) .. ';' .. fmt(btat) .. ';' .. fmt(tail)
  if #out > 0 then head = head .. ';' .. table.concat(out, ';') end
  redis.call('SET', KEYS[1], head, 'PX', ttl)
end
return reply
