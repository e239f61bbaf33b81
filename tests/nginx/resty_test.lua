-- tests/nginx/resty_test.lua: kafka_native.resty in a real nginx under
-- load, run by ctest (lua_nginx_resty, label lua):
--
--   luajit tests/nginx/resty_test.lua <build/lua/jit dir> [nginx binary]
--
-- Starts its own one-node broker (tools/kafka/broker, in a temporary
-- directory: the broker is stopped and restarted mid-run, so it must not
-- be the one other tests share), a 4-partition topic, and nginx with 2
-- workers running tests/nginx/resty_app.lua (resty.conf). Then, while
-- wrk drives GET /produce (content phase) and GET /log (the record is
-- sent from log_by_lua) on 8 connections:
--   * nginx -s reload: the old workers must be gone within STOP_BOUND s
--     (their exit flushes the producer and closes the group consumer);
--   * the broker is stopped, then started again (records wait in the
--     producers, consumers rejoin);
-- and before that, /misuse uses a producer made in the master
-- (init_by_lua) from a worker: it must raise "created before fork".
-- Afterwards it checks: every record acknowledged to a delivery callback
-- is in the topic (read back from the beginning), none twice (the
-- idempotent producer), every accepted record got exactly one report and
-- none failed, the group consumers (commit_async) saw every acknowledged
-- record, both workers answer, and nginx -s quit also ends within
-- STOP_BOUND s. Every wait is bounded; nginx and the broker are stopped
-- even on failure. Prints what it measured.
local jit_dir = assert(arg[1], "usage: luajit resty_test.lua <dir of the LuaJIT kafka_native.so> [nginx]")
package.cpath = jit_dir .. "/?.so;" .. package.cpath
local nginx = arg[2] or "nginx"
local kafka = require("kafka_native")
local socket = require("socket")

local root = (debug.getinfo(1, "S").source:match("^@(.*)/tests/nginx/") or ".")
local DURATION = tonumber(os.getenv("KN_RESTY_SECONDS") or "25")
local STOP_BOUND = 15 -- seconds a graceful stop (reload, quit) may take
local PARTITIONS = 4

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

-- One GET on a fresh connection (Connection: close); status, body.
local function http_get(port, path, timeout)
  local conn = assert(socket.tcp())
  conn:settimeout(timeout or 10)
  local ok, err = conn:connect("127.0.0.1", port)
  if not ok then return nil, err end
  conn:send("GET " .. path .. " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
  local data, rerr, partial = conn:receive("*a")
  conn:close()
  data = data or partial
  if not data or data == "" then return nil, rerr end
  local status = tonumber(data:match("^HTTP/1%.%d (%d+)"))
  local head, body = data:match("^(.-)\r\n\r\n(.*)$")
  if head and head:lower():find("transfer%-encoding: chunked") then
    local out, pos = {}, 1
    while true do
      local size, nxt = body:match("^(%x+)\r\n()", pos)
      if not size or tonumber(size, 16) == 0 then break end
      out[#out + 1] = body:sub(nxt, nxt + tonumber(size, 16) - 1)
      pos = nxt + tonumber(size, 16) + 2
    end
    body = table.concat(out)
  end
  return status, body
end

local function parse_status(body)
  local t = {}
  for k, v in (body or ""):gmatch("(%S+) (%S+)") do t[k] = tonumber(v) end
  return t
end

local function lines_set(body)
  local set, n = {}, 0
  for v in (body or ""):gmatch("[^\n]+") do
    if not set[v] then n = n + 1 end
    set[v] = true
  end
  return set, n
end

local function worker_pids(master)
  local p = io.popen("pgrep -P " .. master)
  local pids = {}
  for line in p:lines() do pids[#pids + 1] = tonumber(line) end
  p:close()
  return pids
end

local function alive(pid)
  return sh("kill -0 " .. pid .. " 2>/dev/null")
end

-- Waits until none of pids is alive; returns the seconds it took, or
-- nil after bound.
local function wait_gone(pids, bound)
  local t0 = socket.gettime()
  while socket.gettime() - t0 < bound do
    local any = false
    for _, pid in ipairs(pids) do any = any or alive(pid) end
    if not any then return socket.gettime() - t0 end
    socket.sleep(0.05)
  end
  return nil
end

local prefix = assert(io.popen("mktemp -d /tmp/kn-resty-test.XXXXXX")):read("*l")
sh("chmod 0777 " .. prefix)
sh("mkdir -m 0777 " .. prefix .. "/sock") -- workers (nobody) make their readiness dirs here
local broker_dir = prefix .. "/broker"
local broker = root .. "/tools/kafka/broker"
local master
local admin
local topic = string.format("kn-resty-%x", os.time())
local group = topic .. "-g"

local function nginx_cmd(extra)
  return nginx .. " -p " .. prefix .. " -e " .. prefix .. "/error.log -c " .. prefix .. "/nginx.conf" .. (extra or "")
end

local function run()
  local t_begin = socket.gettime()
  assert(sh(broker .. " start --dir " .. broker_dir .. " --timeout 120 >" .. prefix .. "/broker.out 2>&1"),
    "broker did not start: " .. (read_file(prefix .. "/broker.out") or ""))
  local bootstrap = assert(read_file(broker_dir .. "/bootstrap"), "no bootstrap file"):match("%S+")
  print(string.format("resty_test: own broker at %s up after %.1f s", bootstrap, socket.gettime() - t_begin))
  admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
  local res = assert(admin:create_topics({ { name = topic, partitions = PARTITIONS } }, { timeout_ms = 30000 }))
  assert(not res[topic].error, res[topic].message)
  assert(admin:wait_for_topics({ topic }, 30000))

  local port = free_port()
  local conf = assert(read_file(root .. "/tests/nginx/resty.conf"))
  local fields = {
    PREFIX = prefix, PORT = tostring(port),
    LUA_PATH = root .. "/bindings/lua/?.lua;" .. root .. "/tests/nginx/?.lua;;",
    LUA_CPATH = jit_dir .. "/?.so;;",
    BOOTSTRAP = bootstrap, TOPIC = topic, GROUP = group,
    LOG_LEVEL = os.getenv("KN_RESTY_LOG_LEVEL") or "warn",
  }
  conf = conf:gsub("%${([%u_]+)}", function(k) return assert(fields[k], "no field " .. k) end)
  write_file(prefix .. "/nginx.conf", conf)
  assert(sh(nginx_cmd()), "nginx did not start: " .. (read_file(prefix .. "/error.log") or ""))
  for _ = 1, 100 do
    master = tonumber(read_file(prefix .. "/nginx.pid") or "")
    if master then break end
    socket.sleep(0.05)
  end
  assert(master, "nginx wrote no pid file")
  local st
  for _ = 1, 100 do
    st = parse_status(select(2, http_get(port, "/status")))
    if (st.workers_started or 0) >= 2 then break end
    socket.sleep(0.1)
  end
  assert((st.workers_started or 0) >= 2, "workers did not start")

  -- A client made before the fork, used in a worker.
  local code, body = http_get(port, "/misuse")
  assert(code == 200, "misuse answered " .. tostring(code))
  local _, nmatch = body:gsub("created before fork: create clients in init_worker_by_lua", "")
  print("resty_test: /misuse -> " .. body:gsub("\n", " | "))
  assert(nmatch == 2, "the master's producer did not raise the fork error for send and close: " .. body)

  -- Load: wrk in the background for DURATION s; 1 in 10 requests sends
  -- from log_by_lua. Values are unique per request.
  write_file(prefix .. "/wrk.lua", [[
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
local n = 0
-- Paced (2 ms between a connection's requests, a few thousand a second
-- at most): what the test checks is every record, not the top rate.
function delay() return 2 end
function request()
  n = n + 1
  local path = (n % 10 == 0) and "/log" or "/produce"
  return wrk.format("GET", path .. "?v=" .. (tid * 100000000 + n))
end
]])
  local wrk_cmd = string.format("(wrk -t2 -c8 -d%ds --timeout 10s -s %s/wrk.lua http://127.0.0.1:%d/ >%s/wrk.out 2>&1; "
    .. "echo done >%s/wrk.done) &", DURATION, prefix, port, prefix, prefix)
  assert(sh(wrk_cmd))
  local t_load = socket.gettime()

  -- Reload under load: the old workers must finish their exit (flush,
  -- consumer close) within STOP_BOUND.
  socket.sleep(4)
  local old = worker_pids(master)
  assert(sh(nginx_cmd(" -s reload")), "nginx -s reload failed")
  local reload_s = wait_gone(old, STOP_BOUND)
  assert(reload_s, "old workers still alive " .. STOP_BOUND .. " s after nginx -s reload")
  print(string.format("resty_test: reload under load: old workers gone after %.2f s", reload_s))

  -- The broker goes away and comes back while requests keep coming.
  local t_stop = socket.gettime()
  assert(sh(broker .. " stop-node 1 --dir " .. broker_dir .. " >>" .. prefix .. "/broker.out 2>&1"),
    "stop-node failed")
  socket.sleep(tonumber(os.getenv("KN_RESTY_OUTAGE") or "3"))
  assert(sh(broker .. " start-node 1 --dir " .. broker_dir .. " >>" .. prefix .. "/broker.out 2>&1"),
    "start-node failed: " .. (read_file(prefix .. "/broker.out") or ""))
  print(string.format("resty_test: broker down and back in %.1f s (%.1f s into the load)",
    socket.gettime() - t_stop, t_stop - t_load))

  -- wrk ends (bounded: its duration + 60 s).
  local limit = DURATION + 60
  while not read_file(prefix .. "/wrk.done") and socket.gettime() - t_load < limit do socket.sleep(0.2) end
  assert(read_file(prefix .. "/wrk.done"), "wrk did not finish")
  local wrk_out = read_file(prefix .. "/wrk.out") or ""
  print("resty_test: wrk: " .. (wrk_out:match("(%d+ requests in [^\n]+)") or "?") .. "; "
    .. (wrk_out:match("Requests/sec:%s*([%d%.]+)") or "?") .. " req/s; "
    .. (wrk_out:match("(Socket errors:[^\n]+)") or "no socket errors")
    .. (wrk_out:match("Non%-2xx or 3xx responses: (%d+)") and ("; non-2xx " .. wrk_out:match("Non%-2xx or 3xx responses: (%d+)")) or ""))

  -- Every accepted record gets its report (bounded: 90 s).
  for _ = 1, 900 do
    st = parse_status(select(2, http_get(port, "/status")))
    if st.accepted and st.accepted == (st.delivered or 0) + (st.failed or 0) then break end
    socket.sleep(0.1)
  end
  print(string.format("resty_test: accepted %d delivered %d failed %d log_dropped %d",
    st.accepted or -1, st.delivered or -1, st.failed or -1, st.log_dropped or -1))
  assert(st.accepted and st.accepted > 0, "nothing accepted")
  assert(st.accepted == st.delivered + st.failed, "records without a report")
  assert(st.failed == 0, st.failed .. " record(s) failed (the outage is far shorter than delivery.timeout.ms)")

  -- No worker stalled: both current workers answer.
  local pids_seen, npids = {}, 0
  for _ = 1, 200 do
    local c, b = http_get(port, "/status", 5)
    assert(c == 200, "a worker did not answer /status: " .. tostring(b))
    local pid = parse_status(b).pid
    if pid and not pids_seen[pid] then
      pids_seen[pid] = true
      npids = npids + 1
    end
    if npids == 2 then break end
  end
  assert(npids == 2, "only " .. npids .. " worker(s) answered")

  local acked, nacked = lines_set(select(2, http_get(port, "/acked", 30)))
  assert(nacked == st.delivered, "acked set " .. nacked .. " vs delivered " .. st.delivered)

  -- The group consumers (one per worker, commit_async) saw every
  -- acknowledged record (bounded: 120 s; a slow machine may take long
  -- to bring the group back after the broker restart).
  local consumed, nconsumed
  local t_catch = socket.gettime()
  while socket.gettime() - t_catch < 120 do
    consumed, nconsumed = lines_set(select(2, http_get(port, "/consumed", 30)))
    local missing = 0
    for v in pairs(acked) do if not consumed[v] then missing = missing + 1 end end
    if missing == 0 then break end
    socket.sleep(1)
  end
  print(string.format("resty_test: group consumers caught up %.1f s after the load", socket.gettime() - t_catch))
  st = parse_status(select(2, http_get(port, "/status")))
  local missing = 0
  for v in pairs(acked) do if not consumed[v] then missing = missing + 1 end end
  print(string.format("resty_test: group consumers read %d records, %d distinct, %d re-read (at-least-once "
    .. "across the rebalances of the reload and the outage)", st.consumed or 0, nconsumed, st.duplicates or 0))
  assert(missing == 0, missing .. " acknowledged record(s) never reached a group consumer")

  -- Graceful stop: bounded.
  local pids = worker_pids(master)
  pids[#pids + 1] = master
  local t_quit = socket.gettime()
  assert(sh(nginx_cmd(" -s quit")), "nginx -s quit failed")
  local quit_s = wait_gone(pids, STOP_BOUND)
  assert(quit_s, "nginx still running " .. STOP_BOUND .. " s after nginx -s quit")
  print(string.format("resty_test: nginx -s quit took %.2f s", socket.gettime() - t_quit))
  master = nil

  -- What the broker holds: read the topic back from the beginning.
  local reader = assert(kafka.consumer({ ["bootstrap.servers"] = bootstrap }))
  local tps = {}
  for p = 0, PARTITIONS - 1 do tps[#tps + 1] = { topic = topic, partition = p, offset = "beginning" } end
  assert(reader:assign(tps))
  local ends = {}
  for p = 0, PARTITIONS - 1 do
    local lst = assert(reader:end_offsets({ { topic = topic, partition = p } }, 30000))
    ends[p] = lst[1].offset
  end
  local on_broker, total, distinct, dups = {}, 0, 0, 0
  local t0 = socket.gettime()
  while socket.gettime() - t0 < 60 do
    local done = true
    for p = 0, PARTITIONS - 1 do
      if reader:position(topic, p, 10000) < ends[p] then done = false end
    end
    if done then break end
    for _, r in ipairs(assert(reader:poll(500))) do
      total = total + 1
      if on_broker[r.value] then dups = dups + 1 else distinct = distinct + 1 end
      on_broker[r.value] = true
    end
  end
  reader:close()
  local lost = 0
  for v in pairs(acked) do if not on_broker[v] then lost = lost + 1 end end
  print(string.format("resty_test: broker holds %d records, %d distinct; %d acknowledged, %d of them missing",
    total, distinct, nacked, lost))
  assert(lost == 0, lost .. " acknowledged record(s) are not in the topic")
  assert(dups == 0, dups .. " record(s) are in the topic twice (idempotent producer)")
  assert(distinct <= st.accepted, "the topic holds records nobody accepted")
  print(string.format("resty_test: whole run %.1f s", socket.gettime() - t_begin))
end

local ok, err = xpcall(run, debug.traceback)
if master then
  sh("kill -QUIT " .. master .. " 2>/dev/null")
  for _ = 1, 100 do
    if not alive(master) then break end
    socket.sleep(0.1)
  end
  if alive(master) then
    for _, pid in ipairs(worker_pids(master)) do sh("kill -KILL " .. pid .. " 2>/dev/null") end
    sh("kill -KILL " .. master .. " 2>/dev/null")
  end
end
if admin then admin:close() end
sh(broker .. " stop --dir " .. broker_dir .. " >>" .. prefix .. "/broker.out 2>&1")
local log = read_file(prefix .. "/error.log") or ""
local alerts = {}
for line in log:gmatch("[^\n]+") do
  if line:find("%[alert%]") or line:find("%[crit%]") or line:find("%[emerg%]")
      or line:find("init_worker: ") or line:find("exit_worker: ") or line:find("delivery callback failed") then
    alerts[#alerts + 1] = line
  end
end
if not ok or #alerts > 0 then
  print("resty_test: error.log (library and helper lines, then the last 40):")
  local all, lib = {}, {}
  for line in log:gmatch("[^\n]+") do
    all[#all + 1] = line
    if line:find("kafka%-native: ") or line:find("kafka_native") then lib[#lib + 1] = line end
  end
  for i = math.max(1, #lib - 150), #lib do print(lib[i]) end
  print("...")
  for i = math.max(1, #all - 40), #all do print(all[i]) end
end
if os.getenv("KN_RESTY_KEEP") then
  print("resty_test: kept " .. prefix)
else
  sh("rm -rf " .. prefix)
end
if not ok then
  io.stderr:write("resty_test FAILED: " .. tostring(err) .. "\n")
  os.exit(1)
end
if #alerts > 0 then
  io.stderr:write("resty_test FAILED: nginx logged alerts or helper errors:\n" .. table.concat(alerts, "\n") .. "\n")
  os.exit(1)
end
print("resty_test: ok")
