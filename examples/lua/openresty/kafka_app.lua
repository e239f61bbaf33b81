-- kafka_app.lua: kafka_native inside nginx (OpenResty / Debian's
-- libnginx-mod-http-lua, LuaJIT). One producer and one consumer per
-- worker, both created after the fork from an init_worker timer;
-- neither ever blocks the worker:
--
--  * request handlers call producer:send with max.block.ms = 0 (send
--    never waits for buffer space or metadata: when it would, it
--    returns "_TIMED_OUT" / "_QUEUE_FULL" and the handler retries
--    after ngx.sleep, which yields to other requests);
--  * delivery reports are served by a light thread that sleeps on the
--    producer's readiness socket (producer:ready_listen / ready_accept):
--    one byte arrives when reports are queued, so an idle worker runs no
--    timer and a report runs as soon as it exists;
--  * the consumer's loop waits on a cosocket connected to the
--    consumer's readiness socket (consumer:ready_listen /
--    ready_accept): one byte arrives when fetched records land, so an
--    idle consumer costs no CPU and a new record is read at once;
--  * on a graceful stop (nginx -s quit / reload), a timer that only
--    ever fires prematurely calls consumer:wakeup(), which also sends a
--    byte on the readiness socket: the loop wakes at once (its poll(0)
--    says "_WAKEUP") and closes, instead of at its next idle check.
--
-- Each worker consumes the partitions p with p % worker_count ==
-- worker id; what the consumers read is counted in a lua_shared_dict
-- (kafka_stats) and shown by M.status().
--
-- nginx.conf (see nginx.conf beside this file and docs/openresty.md):
--   lua_shared_dict kafka_stats 1m;
--   lua_socket_log_errors off;   # readiness waits time out by design
--   init_by_lua_block { require("kafka_app").configure({ ... }) }
--   init_worker_by_lua_block { require("kafka_app").init_worker() }
--   location = /produce { content_by_lua_block { require("kafka_app").produce() } }
--   location = /status  { content_by_lua_block { require("kafka_app").status() } }
local kafka = require("kafka_native")

local M = {}

local cfg         -- from configure()
local producer    -- this worker's producer (nil until the timer made it)

-- cfg: bootstrap, topic, partitions (count), socket_dir (for the
-- readiness socket; writable by the worker user), idle_check_ms (how
-- often an idle consumer looks at ngx.worker.exiting(); default 5000),
-- client_config (optional: more keys for both clients, such as
-- security.protocol, sasl.* and ssl.* for a secured cluster).
function M.configure(conf)
  cfg = conf
end

-- A client's configuration: its own keys plus cfg.client_config.
local function client_conf(own)
  for k, v in pairs(cfg.client_config or {}) do
    if own[k] == nil then own[k] = v end
  end
  return own
end

local function stats()
  return ngx.shared.kafka_stats
end

local function log_to_nginx(level, message)
  local lv = ({ ERROR = ngx.ERR, WARN = ngx.WARN, INFO = ngx.INFO })[level] or ngx.DEBUG
  ngx.log(lv, "kafka-native: ", message)
end

-- Delivery reports: a light thread for the worker's life, poll(0) each
-- time the producer's readiness byte arrives. The receive timeout (1 s)
-- only bounds how long a stopping worker waits for this thread.
local function reporter(premature)
  if premature or not producer then return end
  local path, err = producer:ready_listen(cfg.socket_dir)
  if not path then
    ngx.log(ngx.ERR, "producer readiness socket: ", err)
    return
  end
  local sock = ngx.socket.tcp()
  local ok, cerr = sock:connect("unix:" .. path)
  if not ok then
    ngx.log(ngx.ERR, "producer readiness socket ", path, ": ", cerr)
    return
  end
  assert(producer:ready_accept())
  sock:settimeout(1000)
  while true do
    local n, perr = producer:poll(0)
    if not n then ngx.log(ngx.ERR, "delivery callback failed: ", perr) end
    if ngx.worker.exiting() then break end
    local _, rerr = sock:receive(1) -- sleeps in the event loop
    if rerr and rerr ~= "timeout" then break end
  end
  sock:close()
end

local function on_delivery(report)
  local st = stats()
  if report.error then
    st:incr("delivery_failed", 1, 0)
  else
    st:incr("delivered", 1, 0)
  end
end

-- The consumer's loop (a timer's light thread, for the worker's life).
local function consume(premature)
  if premature then return end
  local id, count = ngx.worker.id(), ngx.worker.count()
  local consumer, err = kafka.consumer(client_conf({
    ["bootstrap.servers"] = cfg.bootstrap,
    ["client.id"] = "nginx-worker-" .. id,
  }), { log = log_to_nginx })
  if not consumer then
    ngx.log(ngx.ERR, "consumer: ", err)
    return
  end
  local tps = {}
  for p = 0, cfg.partitions - 1 do
    if p % count == id then tps[#tps + 1] = { topic = cfg.topic, partition = p, offset = "beginning" } end
  end
  assert(consumer:assign(tps))
  local path = assert(consumer:ready_listen(cfg.socket_dir))
  local sock = ngx.socket.tcp()
  local ok, cerr = sock:connect("unix:" .. path)
  if not ok then
    ngx.log(ngx.ERR, "readiness socket ", path, ": ", cerr)
    consumer:close()
    return
  end
  assert(consumer:ready_accept())
  sock:settimeout(cfg.idle_check_ms or 5000)
  local st = stats()
  st:incr("consumers_ready", 1, 0)
  -- Pending timers run with premature = true when the worker shuts
  -- down: this one exists only to wake the loop below at that moment.
  local closed = false
  local tok, terr = ngx.timer.at(365 * 24 * 3600, function(premature)
    if premature and not closed then consumer:wakeup() end
  end)
  if not tok then ngx.log(ngx.WARN, "no shutdown timer (", terr, "): stops at the next idle check") end

  while not ngx.worker.exiting() do
    -- Drain: poll(0) until a poll returns nothing, yielding between
    -- batches so requests keep flowing.
    while true do
      local recs, perr, code = consumer:poll(0)
      if not recs then
        if code ~= "_WAKEUP" then -- _WAKEUP: the worker is stopping
          ngx.log(ngx.ERR, "poll: ", perr, " (", code, ")")
          st:incr("poll_errors", 1, 0)
        end
        break
      end
      if #recs == 0 then break end
      for _, r in ipairs(recs) do
        local v = tonumber(r.value)
        st:incr("consumed", 1, 0)
        if v then
          st:incr("sum", v, 0)
          if st:add("seen:" .. v, true) then st:incr("distinct", 1, 0) end
        end
      end
      ngx.sleep(0)
    end
    local _, rerr = sock:receive(1) -- sleeps in the event loop
    if rerr and rerr ~= "timeout" then
      ngx.log(ngx.ERR, "readiness socket: ", rerr)
      break
    end
    st:incr("wakeups", 1, 0)
  end
  st:incr("consumers_ready", -1, 0)
  sock:close()
  closed = true
  consumer:close()
end

-- init_worker_by_lua: clients are made in a timer, after the fork and
-- where cosockets are allowed.
function M.init_worker()
  local ok, err = ngx.timer.at(0, function(premature)
    if premature then return end
    local perr
    producer, perr = kafka.producer(client_conf({
      ["bootstrap.servers"] = cfg.bootstrap,
      ["max.block.ms"] = 0,  -- send never waits: the handler yields instead
      ["linger.ms"] = 1,
    }), { on_delivery = on_delivery, log = log_to_nginx })
    if not producer then ngx.log(ngx.ERR, "producer: ", perr) end
    local rok, rerr = ngx.timer.at(0, reporter)
    if not rok then ngx.log(ngx.ERR, "cannot start the delivery reporter: ", rerr) end
    local cok, cerr = ngx.timer.at(0, consume)
    if not cok then ngx.log(ngx.ERR, "cannot start the consumer: ", cerr) end
  end)
  if not ok then ngx.log(ngx.ERR, "init_worker timer: ", err) end
end

-- Sends without blocking the worker: retries "would block" answers
-- after ngx.sleep, for up to deadline_ms.
local function send(value, opts, deadline_ms)
  local deadline = ngx.now() + deadline_ms / 1000
  while true do
    local ok, err, code = producer:send(cfg.topic, value, opts)
    if ok then return true end
    if (code ~= "_TIMED_OUT" and code ~= "_QUEUE_FULL") or ngx.now() >= deadline then
      return nil, err, code
    end
    ngx.sleep(0.005)
  end
end

-- GET /produce?v=<value>[&wait=1]: 200 "queued" at once, or with wait=1
-- the record's "partition offset" once its delivery report ran.
function M.produce()
  if not producer then
    ngx.status = 503
    ngx.say("producer not ready")
    return
  end
  local args = ngx.req.get_uri_args()
  local opts
  local waiter
  if args.wait then
    waiter = { sema = require("ngx.semaphore").new() }
    opts = { on_delivery = function(report)
      on_delivery(report)
      waiter.report = report
      waiter.sema:post(1)
    end }
  end
  local ok, err, code = send(args.v, opts, 10000)
  if not ok then
    ngx.status = 503
    ngx.say("send failed: ", code, ": ", err)
    return
  end
  stats():incr("produced", 1, 0)
  if not waiter then
    ngx.say("queued")
    return
  end
  local got = waiter.sema:wait(30)
  if not got or waiter.report.error then
    ngx.status = 504
    ngx.say("no delivery: ", waiter.report and waiter.report.error or "timeout")
    return
  end
  ngx.say(waiter.report.partition, " ", waiter.report.offset)
end

-- GET /status: the shared counters, one "name value" per line.
function M.status()
  local st = stats()
  for _, k in ipairs({ "consumers_ready", "produced", "delivered", "delivery_failed",
                       "consumed", "distinct", "sum", "wakeups", "poll_errors" }) do
    ngx.say(k, " ", st:get(k) or 0)
  end
end

return M
