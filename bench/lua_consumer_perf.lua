-- bench/lua_consumer_perf.lua: the Lua side of kn_consumer_perf: the
-- same manual assignment of every partition and poll(100 ms) loop,
-- counting key + value bytes (so every record's key and value are
-- read), until --num-records records arrived or --timeout ms passed
-- without one. Prints records/s and MB/s like kn_consumer_perf's
-- summary, and CPU seconds, so the binding's per-record cost can be
-- read against the C figure on the same prefilled topic.
--
--   LUA_CPATH='build/lua/5.4/?.so;;' lua5.4 bench/lua_consumer_perf.lua \
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
local opts = { timeout = 10000, loop = "fast" }
local i = 1
while i <= #arg do
  local a, v = arg[i], arg[i + 1]
  if a == "--bootstrap-server" then opts.bootstrap = v
  elseif a == "--topic" then opts.topic = v
  elseif a == "--num-records" then opts.n = tonumber(v)
  elseif a == "--timeout" then opts.timeout = tonumber(v)
  elseif a == "--loop" then opts.loop = v
  elseif a == "--help" or a == "-h" then
    -- the header comment above is the usage text
    for line in io.lines(arg[0]) do
      if not line:match("^%-%-") then break end
      print((line:gsub("^%-%- ?", "")))
    end
    os.exit(0)
  else error("unknown argument " .. a .. " (see --help)") end
  i = i + 2
end
local kafka = require("kafka_native") -- after --help, which needs no module
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
-- The loop every form but --loop records shares: poll (poll_batch, or
-- poll's array of record tables when tables is set) until --num-records
-- records arrived or none came for --timeout ms. sum(batch, n) reads a
-- non-empty batch's n records and returns their key + value bytes; the
-- per-record work stays inside it, on locals, as in the C loop.
local function drive(sum, tables)
  while count < opts.n and (wall() - last_seen) * 1000 < opts.timeout do
    local batch
    if tables then
      batch = assert(consumer:poll(100))
    else
      batch = assert(consumer:poll_batch(100))
    end
    local n = #batch
    if n > 0 then
      last_seen = wall()
      bytes = bytes + sum(batch, n)
      count = count + n
    end
    if not tables then
      batch:close() -- the fetched buffers go now, not at the next GC
    end
  end
end

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
  drive(function(batch)
    local b = 0
    for _, v, k in batch:each() do
      b = b + (k and #k or 0) + (v and #v or 0)
    end
    return b
  end)
elseif opts.loop == "view" then
  -- The C loop's work: each record's key and value length (-1: null).
  drive(function(batch)
    local b = 0
    local v = batch:view()
    local recs = v.recs -- 0-based C array, v.n entries
    for j = 0, v.n - 1 do
      local r = recs[j]
      local kl, vl = r.key_len, r.value_len
      if kl > 0 then b = b + kl end
      if vl > 0 then b = b + vl end
    end
    v:close()
    return b
  end)
elseif opts.loop == "index" then
  drive(function(batch)
    local b = 0
    local v = batch:view()
    for j = 1, #v do
      local r = v[j]
      local kl, vl = r.key_len, r.value_len
      if kl > 0 then b = b + kl end
      if vl > 0 then b = b + vl end
    end
    v:close()
    return b
  end)
elseif opts.loop == "lens" then
  local key_lens, value_lens = {}, {} -- reused across polls
  drive(function(batch, n)
    local klens, vlens = key_lens, value_lens
    batch:key_lens(klens)
    batch:value_lens(vlens)
    local b = 0
    for j = 1, n do
      local kl, vl = klens[j], vlens[j]
      if kl > 0 then b = b + kl end
      if vl > 0 then b = b + vl end
    end
    return b
  end)
elseif opts.loop == "values" then
  local value_strs, key_strs = {}, {} -- reused across polls
  drive(function(batch, n)
    local values, keys = value_strs, key_strs
    batch:values(values)
    batch:keys(keys)
    local b = 0
    for j = 1, n do
      local k, v = keys[j], values[j]
      b = b + (k and #k or 0) + (v and #v or 0)
    end
    return b
  end)
elseif opts.loop == "poll" then
  drive(function(recs, n)
    local b = 0
    for j = 1, n do
      local r = recs[j]
      local k, v = r.key, r.value
      b = b + (k and #k or 0) + (v and #v or 0)
    end
    return b
  end, true)
else
  error("--loop must be fast, view, index, lens, values, batch, poll or records")
end
local elapsed = wall() - start
local cpu = os.clock() - cpu0
consumer:close()
print(string.format("%s %s: %d records, %.1f records/sec, %.2f MB/sec, %.2f s, CPU %.2f s (%s loop)",
  type(jit) == "table" and jit.version or _VERSION, "lua_consumer_perf", count, count / elapsed,
  bytes / elapsed / (1024 * 1024), elapsed, cpu, opts.loop))
