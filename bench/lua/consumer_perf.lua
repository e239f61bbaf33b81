-- bench/lua/consumer_perf.lua: the consumer benchmark through the Lua
-- binding (what an application written in Lua sees): every partition of
-- the topic assigned from the beginning, consumer:poll_batch(100) in a loop,
-- counting records and key + value bytes until NUM records arrived or
-- none arrived for TIMEOUT_MS (then, with MIN_SECONDS, again from the
-- beginning until the passes add up to MIN_SECONDS of reading). Our
-- defaults, as bench/kn_consumer_perf --defaults,
-- and the same per-record work: every key and value read into the
-- checksum of bench/bench_check.h and every offset checked, through the
-- fastest form the running Lua has (docs/lua-api.md, "Zero-copy views"):
-- batch:view() on LuaJIT, batch:keys_blob / batch:values_blob with
-- batch:offsets / batch:partitions on PUC Lua.
--
--   lua5.4 bench/lua/consumer_perf.lua BOOTSTRAP TOPIC NUM [TIMEOUT_MS] [latest|earliest] [MIN_SECONDS]
-- Output:
--   lua consume: N records, R records/sec, M MiB/sec, E s
--   poll latency p50 A ms, p99 B ms, p99.9 C ms, max D ms over P polls
--   checksum N records, sum 0x..., partitions P, offset errors E
--   window P passes, N records, W s, R records/sec, M MiB/sec
-- Peak RSS and CPU are measured from outside (bench/run, GNU time).
-- Clock: lua-system (installed with busted), monotonic seconds.
local kafka = require("kafka_native")
local system = require("system")

local bootstrap, topic, num, timeout_ms, where = arg[1], arg[2], tonumber(arg[3]), tonumber(arg[4] or "10000"), arg[5]
local min_seconds = tonumber(arg[6] or "0")
if not (bootstrap and topic and num and min_seconds) then
  io.stderr:write("usage: consumer_perf.lua BOOTSTRAP TOPIC NUM [TIMEOUT_MS] [latest|earliest] [MIN_SECONDS]\n")
  os.exit(2)
end
local latest = where == "latest"

local consumer = assert(kafka.consumer({
  ["bootstrap.servers"] = bootstrap,
  ["auto.offset.reset"] = latest and "latest" or "earliest",
  ["client.id"] = "perf-consumer-client",
  -- our defaults otherwise, as bench/kn_consumer_perf --defaults
}))
local now = system.monotime
local start = now()
local parts = assert(consumer:partitions_for(topic, 30000))
assert(consumer:assign(parts))

-- One function per form, called once per non-empty batch: every key and
-- value goes into the checksum of bench/bench_check.h (issue #17) and
-- every offset is checked against its partition's previous one; returns
-- the key + value bytes of its records (null ones count 0).
local next_off, offset_errors, first_error, parts_seen = {}, 0, nil, 0
local function check_offset(p, o)
  local want = next_off[p]
  if want == nil then
    parts_seen = parts_seen + 1
  elseif o ~= want then
    offset_errors = offset_errors + 1
    first_error = first_error or string.format("partition %d: offset %s after %s (%s)", p,
      tostring(o), tostring(want - 1), o > want and "records skipped" or "records repeated")
  end
  next_off[p] = o + 1
end

local dir = arg[0]:match("^(.*)/[^/]*$") or "."
local batch_bytes, sum_hex, sum_reset =
  dofile(dir .. (pcall(require, "ffi") and "/checksum_jit.lua" or "/checksum_puc.lua"))(check_offset)

-- Passes (bench/bench_check.h, "Windows"): with MIN_SECONDS, the topic
-- is read again from the beginning until the passes' reading times (each
-- pass's first record -> its last) add up to MIN_SECONDS; every pass must
-- give the first pass's checksum.
local records, bytes, lat = 0, 0, {}
local passes, pass_records, pass_t0, read_s, first_sum, mismatch = 0, 0, 0, 0, nil, nil
local last = now()
local done = num == 0
while not done and (now() - last) * 1000 <= timeout_ms do
  local t0 = now()
  local batch, msg, code = consumer:poll_batch(100)
  local t1 = now()
  lat[#lat + 1] = t1 - t0
  if not batch then
    io.stderr:write("poll: ", tostring(code), ": ", tostring(msg), "\n")
    os.exit(1)
  end
  local n = #batch
  if n > 0 then
    last = t1
    if pass_records == 0 then pass_t0 = t1 end
    -- the records past this pass's num are before the seek: dropped
    if n > num - pass_records then n = num - pass_records end
    records = records + n
    pass_records = pass_records + n
    bytes = bytes + batch_bytes(batch, n)
    if pass_records == num then
      read_s = read_s + (now() - pass_t0)
      passes = passes + 1
      local sum = sum_hex()
      if passes == 1 then
        first_sum = sum
      elseif sum ~= first_sum or offset_errors > 0 then
        mismatch = mismatch or string.format("checksum mismatch: pass %d read sum 0x%s", passes, sum)
      end
      if read_s >= min_seconds or mismatch or offset_errors > 0 then
        done = true
      else
        sum_reset()
        next_off, parts_seen, pass_records = {}, 0, 0
        assert(consumer:seek_to_beginning())
      end
    end
  end
  batch:close()
end
local elapsed = now() - start
consumer:close()

table.sort(lat)
local function pct(p)
  if #lat == 0 then return 0 end
  local i = math.floor(p * #lat) + 1
  if i > #lat then i = #lat end
  return lat[i] * 1000
end
print(string.format("lua consume: %d records, %.1f records/sec, %.4f MiB/sec, %.3f s",
  records, records / elapsed, bytes / 1048576 / elapsed, elapsed))
print(string.format("poll latency p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms over %d polls",
  pct(0.5), pct(0.99), pct(0.999), (lat[#lat] or 0) * 1000, #lat))
print(string.format("window %d passes, %d records, %.3f s, %.1f records/sec, %.4f MiB/sec",
  passes, records, read_s, records / math.max(read_s, 1e-6), bytes / 1048576 / math.max(read_s, 1e-6)))
print(string.format("checksum %d records, sum 0x%s, partitions %d, offset errors %d",
  passes > 0 and num or records, first_sum or sum_hex(), parts_seen, offset_errors))
if mismatch then
  print(mismatch)
  os.exit(1)
end
if offset_errors > 0 then
  print("OFFSET ERROR: " .. first_error)
  os.exit(1)
end
if passes == 0 then
  print(string.format("WARNING: Exiting before consuming the expected number of messages: timeout (%d ms) exceeded.", timeout_ms))
  os.exit(1)
end
