-- tests/nginx/resty_app.lua: the application tests/nginx/resty_test.lua
-- runs in nginx, built on kafka_native.resty: request handlers produce
-- (content phase, and log_by_lua), a group consumer per worker counts
-- what it reads, and everything is tallied in a lua_shared_dict (which
-- survives nginx -s reload) so the test can compare it with what the
-- broker holds. init_master() makes a producer in the master on
-- purpose: /misuse uses it from a worker and must get the fork error.
local kafka = require("kafka_native")
local resty = require("kafka_native.resty")

local M = {}
local cfg
local master_producer -- made before the fork: misuse only

function M.configure(conf)
  cfg = conf
end

function M.init_master()
  master_producer = assert(kafka.producer({ ["bootstrap.servers"] = cfg.bootstrap }))
end

local function st()
  return ngx.shared.kstats
end

-- A record's report (per record: a success report carries no value).
local function on_delivery(r, v)
  local s = st()
  if r.error then
    s:incr("failed", 1, 0)
    ngx.log(ngx.WARN, "delivery failed: ", r.error, " ", r.message, " retriable=", tostring(r.retriable),
      " value=", tostring(r.value))
  else
    s:incr("delivered", 1, 0)
    s:set("a:" .. v, true)
  end
end

local function handler(records)
  local s = st()
  for _, r in ipairs(records) do
    s:incr("consumed", 1, 0)
    if not s:add("c:" .. r.value, true) then s:incr("duplicates", 1, 0) end
  end
end

-- Library log records into error.log (WARN and up, or the level the
-- test's KN_RESTY_LOG_LEVEL names): what the test prints when it fails.
local function log_to_nginx(level, message)
  ngx.log(level == "ERROR" and ngx.ERR or ngx.WARN, "kafka-native: ", message)
end

function M.init_worker()
  local common = { ["bootstrap.servers"] = cfg.bootstrap }
  local pconf = { ["linger.ms"] = 5 }
  local cconf = { ["group.id"] = cfg.group, ["enable.auto.commit"] = false,
                  ["auto.offset.reset"] = "earliest", ["session.timeout.ms"] = 10000,
                  ["heartbeat.interval.ms"] = 1000 }
  for k, v in pairs(common) do pconf[k] = v; cconf[k] = v end
  local ok, err = resty.init_worker({
    producer = pconf,
    producer_options = { failed_records = true, log = log_to_nginx, log_level = cfg.log_level },
    consumer = cconf,
    consumer_options = { log = log_to_nginx, log_level = cfg.log_level },
    subscribe = { cfg.topic },
    handler = handler,
    socket_dir = cfg.socket_dir,
    flush_timeout_ms = 5000,
    close_timeout_ms = 3000,
  })
  if not ok then ngx.log(ngx.ERR, "init_worker: ", err) end
  st():incr("workers_started", 1, 0)
end

function M.exit_worker()
  local ok, err = resty.exit_worker()
  if not ok then ngx.log(ngx.ERR, "exit_worker: ", err) end
  st():incr("workers_exited", 1, 0)
end

local function accepted()
  st():incr("accepted", 1, 0)
end

-- GET /produce?v=V: 200 once the producer took the record.
function M.produce()
  local v = ngx.var.arg_v
  local deadline = ngx.now() + 5
  while true do
    local ok, err, code = resty.send(cfg.topic, v, { key = v, on_delivery = function(r) on_delivery(r, v) end })
    if ok then
      accepted()
      ngx.say("ok")
      return
    end
    if code ~= "_QUEUE_FULL" or ngx.now() >= deadline then
      ngx.status = 503
      ngx.say(code, ": ", err)
      return
    end
    ngx.sleep(0.005) -- the content phase may yield; log_by_lua may not
  end
end

-- log_by_lua: the send must neither block nor yield.
function M.log_phase()
  local v = ngx.var.arg_v
  local ok, err, code = resty.send(cfg.topic, v, { key = v, on_delivery = function(r) on_delivery(r, v) end })
  if ok then
    accepted()
  else
    st():incr("log_dropped", 1, 0)
    ngx.log(ngx.WARN, "log_by_lua send: ", code, " ", err)
  end
end

-- GET /misuse: the master's producer used in a worker.
function M.misuse()
  local ok, err = pcall(master_producer.send, master_producer, cfg.topic, "x")
  local ok2, err2 = pcall(master_producer.close, master_producer)
  ngx.say(tostring(ok), " ", tostring(err), "\n", tostring(ok2), " ", tostring(err2))
end

function M.status()
  local s = st()
  for _, k in ipairs({ "workers_started", "workers_exited", "accepted", "delivered", "failed",
                       "log_dropped", "consumed", "duplicates" }) do
    ngx.say(k, " ", s:get(k) or 0)
  end
  local rs = resty.stats()
  ngx.say("outstanding ", rs.outstanding)
  ngx.say("consumer ", rs.consumer and 1 or 0)
  ngx.say("pid ", ngx.worker.pid())
end

-- GET /acked: every value whose delivery report succeeded, one a line.
function M.acked()
  local keys = st():get_keys(0)
  local out = {}
  for _, k in ipairs(keys) do
    local v = k:match("^a:(.*)$")
    if v then out[#out + 1] = v end
  end
  ngx.print(table.concat(out, "\n"))
end

-- GET /consumed: every value a worker's consumer saw.
function M.consumed()
  local keys = st():get_keys(0)
  local out = {}
  for _, k in ipairs(keys) do
    local v = k:match("^c:(.*)$")
    if v then out[#out + 1] = v end
  end
  ngx.print(table.concat(out, "\n"))
end

return M
