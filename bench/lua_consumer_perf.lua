-- bench/lua_consumer_perf.lua: the Lua side of kn_consumer_perf: the
-- same manual assignment of every partition and poll(100 ms) loop,
-- counting key + value bytes (so every record's key and value are
-- read), until --num-records records arrived or --timeout ms passed
-- without one. Prints records/s and MB/s like kn_consumer_perf's
-- summary, and CPU seconds, so the binding's per-record cost can be
-- read against the C figure on the same prefilled topic.
--
--   LUA_CPATH='build/lua/5.4/?.so' lua5.4 bench/lua_consumer_perf.lua \
--     --bootstrap-server 127.0.0.1:9092 --topic perf --num-records 5000000 [--loop records]
--
-- The default loop (--loop values) is the fastest table-free form:
-- consumer:poll_batch(100), then batch:keys(t) / batch:values(t) into two
-- tables reused across polls. --loop batch iterates
-- `for i, value, key in batch:each()` (one C call per record), --loop
-- poll uses poll's arrays of record tables, --loop records the
-- `for r in consumer:records()` form, to compare them.
local kafka = require("kafka_native")

local opts = { timeout = 10000, loop = "values" }
local i = 1
while i <= #arg do
  local a, v = arg[i], arg[i + 1]
  if a == "--bootstrap-server" then opts.bootstrap = v
  elseif a == "--topic" then opts.topic = v
  elseif a == "--num-records" then opts.n = tonumber(v)
  elseif a == "--timeout" then opts.timeout = tonumber(v)
  elseif a == "--loop" then opts.loop = v
  else error("unknown argument " .. a) end
  i = i + 2
end
assert(opts.bootstrap and opts.topic and opts.n, "need --bootstrap-server, --topic and --num-records")

-- Wall clock: luasocket's when installed, else whole seconds.
local socket_ok, socket = pcall(require, "socket")
local wall = socket_ok and socket.gettime or os.time

local consumer = assert(kafka.consumer({
  ["bootstrap.servers"] = opts.bootstrap,
  ["auto.offset.reset"] = "earliest",
}))
local tps = assert(consumer:partitions_for(opts.topic, 30000))
assert(consumer:assign(tps))

local count, bytes = 0, 0
local start = wall()
local cpu0 = os.clock()
local last_seen = wall()
if opts.loop == "records" then
  while count < opts.n and (wall() - last_seen) * 1000 < opts.timeout do
    for r in consumer:records(100) do
      local k, v = r.key, r.value
      bytes = bytes + (k and #k or 0) + (v and #v or 0)
      count = count + 1
      if count >= opts.n then break end
    end
    last_seen = wall()
  end
elseif opts.loop == "batch" then
  while count < opts.n and (wall() - last_seen) * 1000 < opts.timeout do
    local batch = assert(consumer:poll_batch(100))
    local n = #batch
    if n > 0 then
      last_seen = wall()
      for _, v, k in batch:each() do
        bytes = bytes + (k and #k or 0) + (v and #v or 0)
      end
      count = count + n
    end
    batch:close() -- the fetched buffers go now, not at the next GC
  end
elseif opts.loop == "values" then
  local values, keys = {}, {}
  while count < opts.n and (wall() - last_seen) * 1000 < opts.timeout do
    local batch = assert(consumer:poll_batch(100))
    local n = #batch
    if n > 0 then
      last_seen = wall()
      batch:values(values)
      batch:keys(keys)
      for j = 1, n do
        local k, v = keys[j], values[j]
        bytes = bytes + (k and #k or 0) + (v and #v or 0)
      end
      count = count + n
    end
    batch:close()
  end
elseif opts.loop == "poll" then
  while count < opts.n and (wall() - last_seen) * 1000 < opts.timeout do
    local recs = assert(consumer:poll(100))
    local n = #recs
    if n > 0 then
      last_seen = wall()
      for j = 1, n do
        local r = recs[j]
        local k, v = r.key, r.value
        bytes = bytes + (k and #k or 0) + (v and #v or 0)
      end
      count = count + n
    end
  end
else
  error("--loop must be values, batch, poll or records")
end
local elapsed = wall() - start
local cpu = os.clock() - cpu0
consumer:close()
print(string.format("%s %s: %d records, %.1f records/sec, %.2f MB/sec, %.2f s, CPU %.2f s (%s loop)",
  type(jit) == "table" and jit.version or _VERSION, "lua_consumer_perf", count, count / elapsed,
  bytes / elapsed / (1024 * 1024), elapsed, cpu, opts.loop))
