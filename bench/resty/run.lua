-- bench/resty/run.lua: one run of scenario resty-produce (bench/run):
-- records/s that request handlers in ONE nginx worker get acknowledged
-- by the broker, through one producer (resty_bench_app.lua), under wrk.
--
--   luajit bench/resty/run.lua --jit-dir DIR --bootstrap HOST:PORT
--       --client kn|resty-kafka|none [--rk-lib DIR --rk-module resty.kafka]
--       [--seconds 20] [--connections 16] [--per-request 1] [--size 100]
--       [--partitions 4] [--linger-ms 5] [--batch-size 16384] [--acks -1]
--       [--nginx nginx] [--keep]
--
-- Makes a fresh topic, starts nginx (nginx.conf beside this file) with
-- one worker, sends 50 warm-up requests (metadata, connections) and waits
-- until they are on the topic, then runs wrk (-t1 -cC -dS, --latency)
-- on GET /produce?n=N while it samples the topic's end offsets every
-- 0.25 s. After wrk it waits until every record a handler accepted is
-- on the topic and the end offsets stay still for 3 s (15 s when some
-- are missing; at most 120 s). Figures:
--   records  what reached the topic during the run (end offsets minus
--            the warm-up's): acknowledged by the broker, not merely
--            accepted by a handler;
--   rate     records / (time of the last end-offset increase - start of
--            wrk): a producer that buffers past the end of the load pays
--            for it;
--   latency  wrk's request latency (p50, p99, max), a closed loop of C
--            connections;
--   CPU      the worker's user+system time over the same span.
--   lost     records a handler accepted that never reached the topic
--            (a producer that drops records under load still has a
--            figure, and the page shows what it dropped).
-- With --client none the handler sends nothing (no producer, no topic):
-- the load's ceiling, nginx and wrk alone. Its records are what the
-- handlers accepted over wrk's run ("records accepted, no producer").
-- Prints one line "resty: ..." (bench/lib/common.sh parses it) and exits
-- 1 when the run did not work (nginx did not start, the warm-up records
-- did not arrive, nothing reached the topic).
local opts = {
  seconds = 20, connections = 16, ["per-request"] = 1, size = 100, partitions = 4,
  ["linger-ms"] = 5, ["batch-size"] = 16384, acks = -1, nginx = "nginx",
  ["rk-module"] = "resty.kafka",
}
do
  local i = 1
  while i <= #arg do
    local k = arg[i]:match("^%-%-(.+)$")
    assert(k, "bench/resty/run.lua: unexpected argument " .. arg[i])
    if k == "keep" then opts.keep = true; i = i + 1
    else opts[k] = assert(arg[i + 1], "--" .. k .. " wants a value"); i = i + 2 end
  end
end
for _, k in ipairs({ "seconds", "connections", "per-request", "size", "partitions", "linger-ms", "batch-size", "acks" }) do
  opts[k] = assert(tonumber(opts[k]), "--" .. k .. " wants a number")
end
assert(opts["jit-dir"] and opts.bootstrap and opts.client, "--jit-dir, --bootstrap and --client are required")
assert(opts.client == "kn" or opts.client == "resty-kafka" or opts.client == "none",
  "--client is kn, resty-kafka or none")
assert(opts.client ~= "resty-kafka" or opts["rk-lib"], "--client resty-kafka needs --rk-lib")

package.cpath = opts["jit-dir"] .. "/?.so;" .. package.cpath
local kafka = require("kafka_native")
local socket = require("socket")
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local root = here .. "/../.."

local function sh(cmd)
  local ok = os.execute(cmd)
  return ok == true or ok == 0
end
local function read_file(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end
local function write_file(path, s)
  local f = assert(io.open(path, "w"))
  f:write(s)
  f:close()
end
local function free_port()
  local s = assert(socket.bind("127.0.0.1", 0))
  local _, port = s:getsockname()
  s:close()
  return tonumber(port)
end
local function http_get(port, path)
  local c = assert(socket.tcp())
  c:settimeout(10)
  if not c:connect("127.0.0.1", port) then c:close(); return nil end
  c:send("GET " .. path .. " HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n")
  local data, _, partial = c:receive("*a")
  c:close()
  data = data or partial or ""
  return tonumber(data:match("^HTTP/1%.%d (%d+)")), data:match("\r\n\r\n(.*)$") or ""
end
local function status(port)
  local t = {}
  local code, body = http_get(port, "/status")
  if code ~= 200 then return t end
  for k, v in body:gmatch("(%S+) (%S+)") do t[k] = tonumber(v) or v end
  return t
end
local function cpu_ticks(pid)
  local s = read_file("/proc/" .. pid .. "/stat")
  if not s then return nil end
  local f = {}
  for x in s:match("%) (.*)$"):gmatch("%S+") do f[#f + 1] = x end
  return tonumber(f[12]) + tonumber(f[13])
end
local function hwm_mib(pid)
  local s = read_file("/proc/" .. pid .. "/status") or ""
  return (tonumber(s:match("VmHWM:%s*(%d+)")) or 0) / 1024
end
local clk_tck = tonumber(io.popen("getconf CLK_TCK"):read("*l")) or 100

local prefix = assert(io.popen("mktemp -d /tmp/kn-resty-bench.XXXXXX")):read("*l")
sh("chmod 0777 " .. prefix .. " && mkdir -m 0777 " .. prefix .. "/sock")
local topic = string.format("bench-resty-%s-%x-%d", opts.client, os.time(), math.random(1e6))
local admin, reader, port
local nginx_started = false

local function nginx_cmd(extra)
  return opts.nginx .. " -p " .. prefix .. " -e " .. prefix .. "/error.log -c " .. prefix .. "/nginx.conf" .. (extra or "")
end

local function end_total(tps)
  local lst, err = reader:end_offsets(tps, 10000)
  if not lst then return nil, err end
  local n = 0
  for _, e in ipairs(lst) do
    if e.error then return nil, e.error end
    n = n + e.offset
  end
  return n
end

-- Waits until the end offsets reach `want` and then stay still for
-- `quiet` s, or, short of `want`, stay still for 15 s (records lost or
-- stuck), at most `bound` s; returns the total and the time of its last
-- increase.
local function settle(tps, from_total, from_t, want, quiet, bound)
  local total, t_last = from_total, from_t
  local t0 = socket.gettime()
  while socket.gettime() - t0 < bound do
    local n = end_total(tps)
    local now = socket.gettime()
    if n and n > total then total, t_last = n, now end
    local still = math.min(now - t_last, now - t0)
    if still >= (total >= want and quiet or 15) then break end
    socket.sleep(0.25)
  end
  return total, t_last
end

local function run()
  local alone = opts.client == "none"
  local tps = {}
  if not alone then
    admin = assert(kafka.admin({ ["bootstrap.servers"] = opts.bootstrap }))
    local res = assert(admin:create_topics({ { name = topic, partitions = opts.partitions } }, { timeout_ms = 30000 }))
    assert(not res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
    reader = assert(kafka.consumer({ ["bootstrap.servers"] = opts.bootstrap }))
    for p = 0, opts.partitions - 1 do tps[#tps + 1] = { topic = topic, partition = p } end
  end

  port = free_port()
  local lua_path = root .. "/bindings/lua/?.lua;" .. here .. "/?.lua;"
  if opts.client == "resty-kafka" then lua_path = lua_path .. opts["rk-lib"] .. "/?.lua;" end
  local app = string.format("{ client = %q, bootstrap = %q, topic = %q, size = %d, acks = %d, "
    .. "linger_ms = %d, batch_size = %d, batch_num = %d, socket_dir = %q, rk_module = %q }",
    opts.client, opts.bootstrap, topic, opts.size, opts.acks, opts["linger-ms"], opts["batch-size"],
    math.max(1, math.floor(opts["batch-size"] / opts.size)), prefix .. "/sock", opts["rk-module"])
  local fields = { PREFIX = prefix, PORT = tostring(port), LUA_PATH = lua_path .. ";",
                   LUA_CPATH = opts["jit-dir"] .. "/?.so;;", APP_CONF = app }
  local conf = assert(read_file(here .. "/nginx.conf"))
  conf = conf:gsub("%${([%u_]+)}", function(k) return assert(fields[k], "no field " .. k) end)
  write_file(prefix .. "/nginx.conf", conf)
  assert(sh(nginx_cmd()), "nginx did not start: " .. (read_file(prefix .. "/error.log") or ""))
  nginx_started = true
  local st
  for _ = 1, 100 do
    st = status(port)
    if st.ready then break end
    socket.sleep(0.1)
  end
  assert(st.ready == 1, "the worker's producer is not ready: " .. tostring(st.last_error)
    .. "\n" .. (read_file(prefix .. "/error.log") or ""))
  local pid = assert(st.pid, "no worker pid")

  -- Warm-up: metadata and connections, before the clock starts.
  for _ = 1, 50 do
    local code, body = http_get(port, "/produce?n=1")
    assert(code == 200, "warm-up request answered " .. tostring(code) .. ": " .. tostring(body))
  end
  local base = alone and 50 or settle(tps, 0, socket.gettime(), 50, 1, 90)
  assert(base >= 50, "the warm-up records did not reach the topic (" .. base .. " of 50): "
    .. tostring(status(port).last_error) .. "\n" .. (read_file(prefix .. "/error.log") or ""))
  local acc0 = status(port).accepted or 0

  write_file(prefix .. "/wrk.lua", "function request() return wrk.format('GET', '/produce?n="
    .. opts["per-request"] .. "') end\n")
  local cpu0 = cpu_ticks(pid)
  local t0 = socket.gettime()
  assert(sh(string.format("(wrk -t1 -c%d -d%ds --timeout 10s --latency -s %s/wrk.lua http://127.0.0.1:%d/ "
    .. ">%s/wrk.out 2>&1; echo done >%s/wrk.done) &", opts.connections, opts.seconds, prefix, port, prefix, prefix)))
  local total, t_last = base, t0
  while not read_file(prefix .. "/wrk.done") and socket.gettime() - t0 < opts.seconds + 60 do
    socket.sleep(0.25)
    local n = not alone and end_total(tps)
    if n and n > total then total, t_last = n, socket.gettime() end
  end
  assert(read_file(prefix .. "/wrk.done"), "wrk did not finish")
  local t_wrk = socket.gettime() - t0
  if alone then
    -- nothing to wait for: what the handlers accepted, over wrk's run
    total, t_last = base + (status(port).accepted or 0) - acc0, t0 + t_wrk
  else
    total, t_last = settle(tps, total, t_last, base + (status(port).accepted or 0) - acc0, 3, 120)
  end
  local cpu1 = cpu_ticks(pid)
  local rss = hwm_mib(pid)
  st = status(port)
  local wrk_out = read_file(prefix .. "/wrk.out") or ""
  local records = total - base
  local accepted = (st.accepted or 0) - acc0
  local span = t_last - t0
  local function ms(s)
    local v, u = (s or ""):match("^([%d%.]+)(%a+)$")
    v = tonumber(v)
    if not v then return "-" end
    return string.format("%.2f", v * (u == "us" and 0.001 or u == "s" and 1000 or u == "m" and 60000 or 1))
  end
  local p50 = ms(wrk_out:match("\n%s+50%%%s+(%S+)"))
  local p99 = ms(wrk_out:match("\n%s+99%%%s+(%S+)"))
  local mx = ms(wrk_out:match("Latency%s+%S+%s+%S+%s+(%S+)"))
  local requests = tonumber(wrk_out:match("(%d+) requests in")) or 0
  local non2xx = tonumber(wrk_out:match("Non%-2xx or 3xx responses: (%d+)")) or 0
  local sockerr = wrk_out:match("Socket errors: ([^\n]+)")
  print(string.format("resty: %d records " .. (alone and "accepted (no producer)" or "on the topic") .. " in %.2f s, %.1f records/s, %.3f MiB/s, p50 %s ms, p99 %s ms, max %s ms, "
    .. "worker CPU %.2f s, worker RSS %.1f MiB, requests %d, non-2xx %d, accepted %d, wrk %.1f s, refused %d, "
    .. "send errors %d, lost %d", records, span, span > 0 and records / span or 0,
    span > 0 and records * opts.size / span / 1048576 or 0, p50, p99, mx,
    (cpu1 - cpu0) / clk_tck, rss, requests, non2xx, accepted, t_wrk, st.refused or 0, st.send_errors or 0,
    math.max(0, accepted - records)))
  if sockerr then print("wrk socket errors: " .. sockerr) end
  if st.last_error then print("last error: " .. st.last_error) end
  assert(records > 0, "no record reached the topic")
end

local ok, err = xpcall(run, debug.traceback)
if nginx_started then
  local master = tonumber(read_file(prefix .. "/nginx.pid") or "")
  sh(nginx_cmd(" -s quit") .. " 2>/dev/null")
  for _ = 1, 300 do
    if not master or not sh("kill -0 " .. master .. " 2>/dev/null") then master = nil; break end
    socket.sleep(0.1)
  end
  if master then
    io.stderr:write("bench/resty/run.lua: nginx did not quit within 30 s: killed\n")
    sh("pkill -KILL -P " .. master .. "; kill -KILL " .. master)
  end
end
if reader then reader:close() end
if admin then
  admin:delete_topics({ topic })
  admin:close()
end
local log = read_file(prefix .. "/error.log") or ""
if not ok then
  io.stderr:write("bench/resty/run.lua FAILED: " .. tostring(err) .. "\n")
  local lines = {}
  for l in log:gmatch("[^\n]+") do lines[#lines + 1] = l end
  for i = math.max(1, #lines - 20), #lines do io.stderr:write(lines[i], "\n") end
end
if opts.keep then print("kept " .. prefix) else sh("rm -rf " .. prefix) end
os.exit(ok and 0 or 1)
