-- bench/lua/checksum_puc.lua: the checksum of bench/bench_check.h for
-- bench/lua/consumer_perf.lua on Lua 5.3 and 5.4 (a file of its own:
-- LuaJIT cannot parse its operators). Reads each batch as one string of
-- keys and one of values (batch:keys_blob / batch:values_blob: no Lua
-- string per record), 8 bytes at a time with string.unpack at a
-- position, and the offsets and partitions as two integer tables
-- (batch:offsets / batch:partitions: no C call per record). Lua integers
-- wrap mod 2^64 like C's uint64_t. Returns a function of
-- check_offset(partition, offset) that gives batch_bytes(batch, n)
-- (checksums the batch's first n records and returns their key + value
-- bytes), sum_hex() (the checksum, 16 hex digits) and reset() (a new
-- pass starts from zero).
local PRIME, BASIS = 0x100000001b3, 0xcbf29ce484222325
local unpack = string.unpack
-- The last partial word's format by its length (no string built per record).
local TAIL = {}
for n = 1, 7 do TAIL[n] = "<I" .. n end

-- Folds len bytes of s from pos (len -1: null); returns h and the
-- position after them.
local function fold_bytes(h, s, pos, len)
  if len < 0 then return (h ~ -1) * PRIME, pos end
  local last, w = pos + len - 8, nil
  while pos <= last do
    w, pos = unpack("<i8", s, pos)
    h = (h ~ w) * PRIME
  end
  local rest = last + 8 - pos
  if rest > 0 then
    w, pos = unpack(TAIL[rest], s, pos)
    h = (h ~ w) * PRIME
  end
  return (h ~ len) * PRIME, pos
end

return function(check_offset)
  local sum = 0
  local klens, vlens, parts, offs = {}, {}, {}, {}
  local function batch_bytes(batch, count)
    local keys = batch:keys_blob(klens)
    local values = batch:values_blob(vlens)
    batch:partitions(parts)
    batch:offsets(offs)
    local n, kpos, vpos, s, h = 0, 1, 1, sum, nil
    for i = 1, count do
      local kl, vl = klens[i], vlens[i]
      h, kpos = fold_bytes(BASIS, keys, kpos, kl)
      h, vpos = fold_bytes(h, values, vpos, vl)
      s = s + h
      check_offset(parts[i], offs[i])
      if kl > 0 then n = n + kl end
      if vl > 0 then n = n + vl end
    end
    sum = s
    return n
  end
  return batch_bytes, function() return string.format("%016x", sum) end, function() sum = 0 end
end
