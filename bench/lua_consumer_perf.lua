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
-- The default loop (--loop fast) is the fastest form the running Lua
-- has: on LuaJIT --loop view (batch:view(), the zero-copy FFI view: each
-- record's key_len / value_len read in place, no Lua string), on PUC Lua
-- --loop lens (batch:key_lens(t) / batch:value_lens(t): integers into
-- two tables reused across polls, no Lua string). --loop values copies
-- every key and value into Lua strings (batch:keys(t) / batch:values(t)),
-- --loop index reads the view through its checked 1-based v[i] (LuaJIT),
-- --loop batch iterates
-- `for i, value, key in batch:each()` (one C call per record), --loop
-- poll uses poll's arrays of record tables, --loop records the
-- `for r in consumer:records()` form, to compare them.
local kafka = require("kafka_native")

local opts = { timeout = 10000, loop = "fast" }
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
if opts.loop == "fast" then
  opts.loop = pcall(require, "ffi") and "view" or "lens"
end

-- Wall clock: lua-system's monotonic clock (installed with busted),
-- else luasocket's, else whole seconds.
local system_ok, system = pcall(require, "system")
local socket_ok, socket = pcall(require, "socket")
local wall = system_ok and system.monotime or socket_ok and socket.gettime or os.time

local consumer = assert(kafka.consumer({
  ["bootstrap.servers"] = opts.bootstrap,
  ["auto.offset.reset"] = "earliest",
}))
-- The clock starts before the assignment, as kn_consumer_perf's does.
local start = wall()
local tps = assert(consumer:partitions_for(opts.topic, 30000))
assert(consumer:assign(tps))

local count, bytes = 0, 0
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
elseif opts.loop == "view" then
  -- The C loop's work: each record's key and value length (-1: null).
  while count < opts.n and (wall() - last_seen) * 1000 < opts.timeout do
    local batch = assert(consumer:poll_batch(100))
    local n = #batch
    if n > 0 then
      last_seen = wall()
      local v = batch:view()
      local recs = v.recs -- 0-based C array, v.n entries
      for j = 0, v.n - 1 do
        local r = recs[j]
        local kl, vl = r.key_len, r.value_len
        if kl > 0 then bytes = bytes + kl end
        if vl > 0 then bytes = bytes + vl end
      end
      v:close()
      count = count + n
    end
    batch:close()
  end
elseif opts.loop == "index" then
  while count < opts.n and (wall() - last_seen) * 1000 < opts.timeout do
    local batch = assert(consumer:poll_batch(100))
    local n = #batch
    if n > 0 then
      last_seen = wall()
      local v = batch:view()
      for j = 1, #v do
        local r = v[j]
        local kl, vl = r.key_len, r.value_len
        if kl > 0 then bytes = bytes + kl end
        if vl > 0 then bytes = bytes + vl end
      end
      v:close()
      count = count + n
    end
    batch:close()
  end
elseif opts.loop == "lens" then
  local klens, vlens = {}, {}
  while count < opts.n and (wall() - last_seen) * 1000 < opts.timeout do
    local batch = assert(consumer:poll_batch(100))
    local n = #batch
    if n > 0 then
      last_seen = wall()
      batch:key_lens(klens)
      batch:value_lens(vlens)
      for j = 1, n do
        local kl, vl = klens[j], vlens[j]
        if kl > 0 then bytes = bytes + kl end
        if vl > 0 then bytes = bytes + vl end
      end
      count = count + n
    end
    batch:close()
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
  error("--loop must be fast, view, index, lens, values, batch, poll or records")
end
local elapsed = wall() - start
local cpu = os.clock() - cpu0
consumer:close()
print(string.format("%s %s: %d records, %.1f records/sec, %.2f MB/sec, %.2f s, CPU %.2f s (%s loop)",
  type(jit) == "table" and jit.version or _VERSION, "lua_consumer_perf", count, count / elapsed,
  bytes / elapsed / (1024 * 1024), elapsed, cpu, opts.loop))
