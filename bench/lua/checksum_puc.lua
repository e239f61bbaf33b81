-- bench/lua/checksum_puc.lua: the checksum of bench/bench_check.h for
-- bench/lua/consumer_perf.lua on Lua 5.3 and 5.4 (a file of its own:
-- LuaJIT cannot parse its operators). One string per key and value
-- (batch:keys / batch:values), read 8 bytes at a time with string.unpack;
-- Lua integers wrap mod 2^64 like C's uint64_t. Returns a function of
-- check_offset(partition, offset) that gives batch_bytes(batch, n)
-- (checksums the batch's first n records and returns their key + value
-- bytes), sum_hex() (the checksum, 16 hex digits) and reset() (a new
-- pass starts from zero).
local PRIME, BASIS = 0x100000001b3, 0xcbf29ce484222325
local unpack = string.unpack

local function fold_bytes(h, s)
  if s == nil then return (h ~ -1) * PRIME end
  local len = #s
  local pos, last = 1, len - 7
  while pos <= last do
    h = (h ~ unpack("<i8", s, pos)) * PRIME
    pos = pos + 8
  end
  if pos <= len then h = (h ~ unpack("<I" .. (len - pos + 1), s, pos)) * PRIME end
  return (h ~ len) * PRIME
end

return function(check_offset)
  local sum = 0
  local keys, values = {}, {}
  local function batch_bytes(batch, count)
    batch:keys(keys)
    batch:values(values)
    local n = 0
    for i = 1, count do
      local k, v = keys[i], values[i]
      sum = sum + fold_bytes(fold_bytes(BASIS, k), v)
      check_offset(batch:partition(i), batch:offset(i))
      if k then n = n + #k end
      if v then n = n + #v end
    end
    return n
  end
  return batch_bytes, function() return string.format("%016x", sum) end, function() sum = 0 end
end
