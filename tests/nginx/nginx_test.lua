-- tests/nginx/nginx_test.lua: kafka_native in a real nginx (Debian's
-- libnginx-mod-http-lua, LuaJIT), run by ctest (label lua):
--
--   luajit tests/nginx/nginx_test.lua <build/lua/jit dir> [nginx binary]
--
-- Creates a fresh 2-partition topic on $KAFKA_BOOTSTRAP, fills in
-- examples/lua/openresty/nginx.conf (2 workers, a free loopback port,
-- lua_package_cpath at the built LuaJIT module) and starts nginx. Then:
-- requests produce records (GET /produce?v=i), the workers' consumers
-- read them (GET /status counts them in a shared dict), and the
-- latency of every request is recorded and printed. It checks that the
-- consumers saw every produced record exactly once, a few ?wait=1
-- requests got their delivery offset, p99 latency is under a generous
-- 1 s, and that the idle workers used (far) less than a core while
-- nothing happened (a spinning consumer loop would not). Every wait is
-- bounded; nginx is stopped and the topic deleted even on failure.
local jit_dir = assert(arg[1], "usage: luajit nginx_test.lua <dir of the LuaJIT kafka_native.so>")
package.cpath = jit_dir .. "/?.so;" .. package.cpath
local nginx = arg[2] or "nginx"
local kafka = require("kafka_native")
local socket = require("socket")

local root = (debug.getinfo(1, "S").source:match("^@(.*)/tests/nginx/") or ".")
local N = tonumber(os.getenv("KN_NGINX_REQUESTS") or "2000")
local WAITED = 20 -- of which ?wait=1 (delivery offset in the answer)

local bootstrap = os.getenv("KAFKA_BOOTSTRAP")
assert(bootstrap and bootstrap ~= "", "KAFKA_BOOTSTRAP is not set: start a broker with tools/kafka/broker start")

-- KN_NGINX_SECURITY=SASL_SSL: the workers' clients talk to the harness's
-- SASL_SSL listener (SCRAM-SHA-512, the CA given inline as PEM so the
-- worker user needs no access to the key folder); the test's own admin
-- stays on PLAINTEXT.
local security = os.getenv("KN_NGINX_SECURITY") or ""
local client_bootstrap, client_config = bootstrap, {}
if security == "SASL_SSL" then
  client_bootstrap = assert(os.getenv("KAFKA_BOOTSTRAP_SASL_SSL"), "KAFKA_BOOTSTRAP_SASL_SSL is not set")
  local tls_dir = assert(os.getenv("KN_TLS_DIR"), "KN_TLS_DIR is not set")
  local f = assert(io.open(tls_dir .. "/ca.pem"))
  local ca = f:read("*a")
  f:close()
  client_config = {
    ["security.protocol"] = "SASL_SSL",
    ["sasl.mechanism"] = "SCRAM-SHA-512",
    ["sasl.jaas.config"] = string.format(
      'org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";',
      assert(os.getenv("KN_SASL_USER")), assert(os.getenv("KN_SASL_PASSWORD"))),
    ["ssl.truststore.type"] = "PEM",
    ["ssl.truststore.certificates"] = ca,
  }
  -- The harness's SCRAM user is there (spec/helper.lua says why).
  local broker_dir = os.getenv("KN_BROKER_DIR")
  if broker_dir and broker_dir ~= "" then
    os.execute(string.format("'%s/tools/kafka/broker' ensure-scram --dir '%s' >&2", root, broker_dir))
  end
elseif security ~= "" then
  error("KN_NGINX_SECURITY: " .. security .. " is not one of SASL_SSL or empty")
end

-- A Lua table constructor for nginx.conf's init_by_lua_block.
local function lua_table(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    parts[#parts + 1] = string.format("[%q] = %q", k, t[k]):gsub("\\\n", "\\n")
  end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

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

local function free_port()
  local s = assert(socket.bind("127.0.0.1", 0))
  local _, port = s:getsockname()
  s:close()
  return tonumber(port)
end

-- One HTTP/1.1 GET on a keep-alive connection; returns status, body.
local function http_get(conn, path)
  assert(conn:send("GET " .. path .. " HTTP/1.1\r\nHost: localhost\r\n\r\n"))
  local line = assert(conn:receive("*l"))
  local status = tonumber(line:match("^HTTP/1%.%d (%d+)"))
  local len, chunked
  while true do
    local h = assert(conn:receive("*l"))
    if h == "" then break end
    local k, v = h:match("^([^:]+):%s*(.*)$")
    if k and k:lower() == "content-length" then len = tonumber(v) end
    if k and k:lower() == "transfer-encoding" and v:lower():find("chunked") then chunked = true end
  end
  local body = ""
  if chunked then
    while true do
      local size = tonumber(assert(conn:receive("*l")), 16)
      if size == 0 then
        assert(conn:receive("*l"))
        break
      end
      body = body .. assert(conn:receive(size))
      assert(conn:receive("*l"))
    end
  elseif len then
    body = len > 0 and assert(conn:receive(len)) or ""
  end
  return status, body
end

local function connect(port)
  local conn = assert(socket.tcp())
  conn:settimeout(30)
  assert(conn:connect("127.0.0.1", port))
  return conn
end

local function parse_status(body)
  local t = {}
  for k, v in body:gmatch("(%S+) (%S+)") do t[k] = tonumber(v) end
  return t
end

-- CPU seconds (user + system) of a process, from /proc.
local function cpu_seconds(pid)
  local stat = read_file("/proc/" .. pid .. "/stat")
  if not stat then return 0 end
  local rest = stat:match("%) (.*)$")
  local fields = {}
  for f in rest:gmatch("%S+") do fields[#fields + 1] = f end
  -- fields[1] is state (field 3); utime, stime are fields 14, 15.
  return (tonumber(fields[12]) + tonumber(fields[13])) / 100
end

local function worker_pids(master)
  local p = io.popen("pgrep -P " .. master)
  local pids = {}
  for line in p:lines() do pids[#pids + 1] = tonumber(line) end
  p:close()
  return pids
end

local function percentile(sorted, q)
  return sorted[math.max(1, math.ceil(#sorted * q))]
end

local prefix = assert(io.popen("mktemp -d /tmp/kn-nginx-test.XXXXXX")):read("*l")
-- Workers run as nobody when nginx starts as root: let them create
-- their readiness sockets here.
sh("chmod 0777 " .. prefix)
local topic = string.format("kn-nginx-%x-%d", os.time(), math.random(1, 1e6))
local admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
local master

local function run()
  local res = assert(admin:create_topics({ { name = topic, partitions = 2 } }, { timeout_ms = 30000 }))
  assert(not res[topic].error, res[topic].message)
  assert(admin:wait_for_topics({ topic }, 30000))

  local port = free_port()
  local conf = assert(read_file(root .. "/examples/lua/openresty/nginx.conf"))
  local fields = {
    PREFIX = prefix, PORT = tostring(port),
    LUA_PATH = root .. "/examples/lua/openresty/?.lua;;",
    LUA_CPATH = jit_dir .. "/?.so;;",
    BOOTSTRAP = client_bootstrap, TOPIC = topic, PARTITIONS = "2",
    CLIENT_CONFIG = lua_table(client_config),
  }
  conf = conf:gsub("%${([%u_]+)}", function(k) return assert(fields[k], "no field " .. k) end)
  local f = assert(io.open(prefix .. "/nginx.conf", "w"))
  f:write(conf)
  f:close()
  assert(sh(nginx .. " -p " .. prefix .. " -e " .. prefix .. "/error.log -c " .. prefix .. "/nginx.conf"),
    "nginx did not start: " .. (read_file(prefix .. "/error.log") or ""))
  for _ = 1, 100 do
    master = tonumber(read_file(prefix .. "/nginx.pid") or "")
    if master then break end
    socket.sleep(0.05)
  end
  assert(master, "nginx wrote no pid file")

  -- Both workers' consumers are up (bounded: 30 s).
  local conn = connect(port)
  local st
  for _ = 1, 300 do
    local code, body = http_get(conn, "/status")
    assert(code == 200, "status answered " .. tostring(code))
    st = parse_status(body)
    if st.consumers_ready == 2 then break end
    socket.sleep(0.1)
  end
  assert(st.consumers_ready == 2, "consumers not ready: " .. tostring(st.consumers_ready))

  -- Produce: N requests on keep-alive connections, each timed (a new
  -- connection every 500 requests: nginx closes one after
  -- keepalive_requests, 1000 by default).
  local lat = {}
  local offsets = 0
  local t_start = socket.gettime()
  for i = 1, N do
    if i % 500 == 0 then
      conn:close()
      conn = connect(port)
    end
    local wait = i % math.floor(N / WAITED) == 0
    local t0 = socket.gettime()
    local code, body = http_get(conn, "/produce?v=" .. i .. (wait and "&wait=1" or ""))
    lat[#lat + 1] = (socket.gettime() - t0) * 1000
    assert(code == 200, "request " .. i .. " answered " .. tostring(code) .. ": " .. body)
    if wait then
      local p, o = body:match("^(%d+) (%d+)")
      assert(p and o, "?wait=1 answered " .. body)
      offsets = offsets + 1
    end
  end
  local t_produce = socket.gettime() - t_start

  -- The consumers saw every record once (bounded: 60 s).
  conn:close()
  conn = connect(port)
  for _ = 1, 600 do
    st = parse_status(select(2, http_get(conn, "/status")))
    if st.consumed >= N and st.delivered >= N then break end
    socket.sleep(0.1)
  end
  local t_all = socket.gettime() - t_start
  conn:close()

  table.sort(lat)
  print(string.format("nginx_test: %d requests in %.2f s; latency ms p50 %.2f p90 %.2f p99 %.2f max %.2f",
    N, t_produce, percentile(lat, 0.5), percentile(lat, 0.9), percentile(lat, 0.99), lat[#lat]))
  print(string.format("nginx_test: produced %d delivered %d failed %d consumed %d distinct %d wakeups %d "
    .. "poll_errors %d; all consumed %.2f s after the first request",
    st.produced, st.delivered, st.delivery_failed, st.consumed, st.distinct, st.wakeups, st.poll_errors, t_all))
  assert(st.produced == N, "produced " .. st.produced)
  assert(st.delivered == N and st.delivery_failed == 0, "delivered " .. st.delivered)
  assert(st.consumed == N, "consumed " .. st.consumed .. " of " .. N)
  assert(st.distinct == N, "distinct " .. st.distinct .. " of " .. N)
  assert(st.sum == N * (N + 1) / 2, "sum of values " .. st.sum)
  assert(st.poll_errors == 0, "poll errors")
  assert(offsets == WAITED, "?wait=1 answers " .. offsets)
  assert(percentile(lat, 0.99) < 1000, "p99 latency over 1 s")

  -- Idle: the workers (event loop, consumer and producer threads) use
  -- far less than a core; a consumer loop spinning on poll(0) would
  -- use a whole one.
  local pids = worker_pids(master)
  assert(#pids == 2, "expected 2 workers, found " .. #pids)
  local before = 0
  for _, pid in ipairs(pids) do before = before + cpu_seconds(pid) end
  local window = 3
  socket.sleep(window)
  local used = -before
  for _, pid in ipairs(pids) do used = used + cpu_seconds(pid) end
  print(string.format("nginx_test: idle workers used %.2f s CPU in %d s", used, window))
  assert(used < 0.3 * window, "idle workers used " .. used .. " s of CPU in " .. window .. " s")

  -- A record produced while idle wakes a consumer at once.
  conn = connect(port)
  local before_wakeups = parse_status(select(2, http_get(conn, "/status"))).consumed
  assert(http_get(conn, "/produce?v=" .. (N + 1)) == 200)
  local seen = false
  for _ = 1, 300 do
    if parse_status(select(2, http_get(conn, "/status"))).consumed > before_wakeups then
      seen = true
      break
    end
    socket.sleep(0.01)
  end
  conn:close()
  assert(seen, "a record produced while idle was not consumed within 3 s")
end

local ok, err = xpcall(run, debug.traceback)
-- Stop nginx whatever happened: graceful, then forced (bounded).
if master then
  sh("kill -QUIT " .. master .. " 2>/dev/null")
  for _ = 1, 100 do
    if not sh("kill -0 " .. master .. " 2>/dev/null") then break end
    socket.sleep(0.1)
  end
  if sh("kill -0 " .. master .. " 2>/dev/null") then
    print("nginx_test: nginx did not stop in 10 s, killing it")
    sh("kill -KILL " .. master .. " 2>/dev/null")
    for _, pid in ipairs(worker_pids(master)) do sh("kill -KILL " .. pid .. " 2>/dev/null") end
  end
end
local log = read_file(prefix .. "/error.log") or ""
local alerts = {}
for line in log:gmatch("[^\n]+") do
  if line:find("%[error%]") or line:find("%[alert%]") or line:find("%[crit%]") or line:find("%[emerg%]") then
    alerts[#alerts + 1] = line
  end
end
pcall(function() admin:delete_topics({ topic }) end)
admin:close()
if not ok or #alerts > 0 then
  print("nginx_test: error.log:\n" .. log)
end
sh("rm -rf " .. prefix)
if not ok then
  io.stderr:write("nginx_test FAILED: " .. tostring(err) .. "\n")
  os.exit(1)
end
if #alerts > 0 then
  io.stderr:write("nginx_test FAILED: nginx logged errors (above)\n")
  os.exit(1)
end
print("nginx_test: ok")
