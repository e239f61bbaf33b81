-- bench/lua/checksum_jit.lua: the checksum of bench/bench_check.h for
-- bench/lua/consumer_perf.lua on LuaJIT (a file of its own: PUC Lua cannot
-- parse its 64-bit literals). Reads each batch through the zero-copy FFI
-- view, the words in place as uint64_t cdata (whose arithmetic wraps mod
-- 2^64 like C's), the last partial word copied into a zeroed uint64_t as
-- bench_check.h's memcpy does. Returns a function of
-- check_offset(partition, offset) that gives batch_bytes(batch, n)
-- (checksums the batch's first n records and returns their key + value
-- bytes), sum_hex() (the checksum, 16 hex digits) and reset() (a new
-- pass starts from zero).
--
-- Written so the record loop is one compiled trace (luajit -jv shows no
-- abort, -jp puts the time in the loop, not in the interpreter):
--  - the sum is a local of the batch loop, stored back once per batch: a
--    uint64_t upvalue written per record is a new boxed cdata per record
--    (allocation sinking cannot remove a store that escapes the trace);
--  - the partial word is one ffi.copy, not a loop over its bytes: an
--    inner loop with a trip count of 1 or 2 splits the record loop into
--    several traces, and every hop between them boxes h.
local ffi, bit = require("ffi"), require("bit")
local u64p = ffi.typeof("const uint64_t *")
local PRIME, BASIS = 0x100000001b3ULL, 0xcbf29ce484222325ULL
local bxor, rshift, copy = bit.bxor, bit.rshift, ffi.copy
local tail = ffi.new("uint64_t[1]")

local function fold_bytes(h, p, len)
  if len > 0 then
    local words = rshift(len, 3)
    local w = ffi.cast(u64p, p)
    for j = 0, words - 1 do h = bxor(h, w[j]) * PRIME end
    local base = words * 8
    if base < len then
      tail[0] = 0
      copy(tail, p + base, len - base)
      h = bxor(h, tail[0]) * PRIME
    end
  end
  return bxor(h, 0LL + len) * PRIME -- a null's -1 folds as 2^64 - 1, as in C
end

return function(check_offset)
  local sum = 0ULL
  local function batch_bytes(batch, count)
    local v = batch:view()
    local recs, n, s = v.recs, 0, sum
    for i = 0, count - 1 do
      local r = recs[i]
      local kl, vl = r.key_len, r.value_len -- -1: null
      s = s + fold_bytes(fold_bytes(BASIS, r.key, kl), r.value, vl)
      check_offset(r.partition, tonumber(r.offset))
      if kl > 0 then n = n + kl end
      if vl > 0 then n = n + vl end
    end
    sum = s
    v:close()
    return n
  end
  return batch_bytes, function() return bit.tohex(sum, 16) end, function() sum = 0ULL end
end
