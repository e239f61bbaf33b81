-- bench/resty/resty_bench_app.lua: the request handler that
-- bench/resty/run.lua measures in one nginx worker (bench/run, scenario
-- resty-produce). GET /produce sends `n` records of `size` bytes from
-- the content phase, through one of two producers made per worker in
-- init_worker_by_lua:
--   kn           kafka_native.resty (ours)
--   resty-kafka  lua-resty-kafka's async producer (a checkout the user
--                points bench/run at; not part of this repository)
--   none         no producer: the send does nothing (the load's ceiling)
-- Both handlers do the same thing when the producer's buffer is full:
-- sleep 1 ms (the content phase may yield) and try again, for at most
-- 5 s, then answer 503. Nothing counts deliveries here: the driver
-- counts what reached the topic.
local M = {}
local cfg
local send -- send(value): true, or nil, message, full (buffer full)
local value
local counts = { accepted = 0, refused = 0, send_errors = 0 }
local last_error

function M.configure(conf)
  cfg = conf
  -- Loaded here, in the master (init_by_lua, as docs/openresty.md
  -- advises), so the workers inherit the modules: a worker runs as an
  -- unprivileged user that may not be able to read a checkout in root's
  -- home (tools/deps/fresh-debian's clone is in /root).
  if cfg.client == "kn" then require("kafka_native.resty") end
end

local function init_kn()
  local resty = require("kafka_native.resty")
  local ok, err = resty.init_worker({
    producer = {
      ["bootstrap.servers"] = cfg.bootstrap,
      ["acks"] = cfg.acks == -1 and "all" or tostring(cfg.acks),
      ["linger.ms"] = cfg.linger_ms,
      ["batch.size"] = cfg.batch_size,
    },
    socket_dir = cfg.socket_dir,
    flush_timeout_ms = 10000,
  })
  if not ok then return nil, err end
  send = function(v)
    local sok, serr, code = resty.send(cfg.topic, v)
    if sok then return true end
    return nil, serr, code == "_QUEUE_FULL"
  end
  M.outstanding = function() return resty.stats().outstanding end
  M.exit_worker = function() resty.exit_worker() end
  return true
end

-- lua-resty-kafka as its README advises for request handlers: the async
-- producer, made once per worker; its buffer settings matched to ours
-- (flush_time = linger.ms, batch_size = batch.size, required_acks =
-- acks), the newest produce API it speaks.
local function init_resty_kafka()
  local producer = require(cfg.rk_module .. ".producer")
  local host, port = cfg.bootstrap:match("^([^,:]+):(%d+)")
  local bp, err = producer:new({ { host = host, port = tonumber(port) } }, {
    producer_type = "async",
    required_acks = cfg.acks,
    api_version = 2,
    flush_time = cfg.linger_ms,
    batch_size = cfg.batch_size,
    batch_num = cfg.batch_num,
    max_buffering = cfg.max_buffering,
    error_handle = function(_, _, _, index, e)
      counts.send_errors = counts.send_errors + (tonumber(index) or 0) / 2
      last_error = tostring(e)
    end,
  })
  if not bp then return nil, err end
  send = function(v)
    local sok, serr = bp:send(cfg.topic, nil, v)
    if sok then return true end
    return nil, serr, serr == "buffer overflow"
  end
  M.outstanding = function() return -1 end
  return true
end

-- The load's ceiling: the same handler, a send that does nothing (no
-- producer). What neither client can exceed on this machine and load:
-- nginx's own request handling, wrk and the loopback.
local function init_none()
  send = function() return true end
  M.outstanding = function() return 0 end
  return true
end

function M.init_worker()
  value = string.rep("x", cfg.size)
  local ok, err
  if cfg.client == "kn" then ok, err = init_kn()
  elseif cfg.client == "none" then ok, err = init_none()
  else ok, err = init_resty_kafka() end
  if not ok then
    last_error = "init_worker: " .. tostring(err)
    ngx.log(ngx.ERR, "resty_bench_app: ", last_error)
  end
end

function M.exit_worker() end

-- GET /produce?n=N
function M.produce()
  local n = tonumber(ngx.var.arg_n) or 1
  local deadline
  for _ = 1, n do
    while true do
      local ok, err, full = send(value)
      if ok then
        counts.accepted = counts.accepted + 1
        break
      end
      deadline = deadline or ngx.now() + 5
      if not full or ngx.now() >= deadline then
        counts.refused = counts.refused + 1
        last_error = tostring(err)
        ngx.status = 503
        ngx.say(err)
        return
      end
      ngx.sleep(0.001)
    end
  end
  ngx.say("ok")
end

function M.status()
  ngx.say("ready ", send and 1 or 0)
  ngx.say("pid ", ngx.worker.pid())
  for k, v in pairs(counts) do ngx.say(k, " ", v) end
  ngx.say("outstanding ", M.outstanding and M.outstanding() or -1)
  if last_error then ngx.say("last_error ", (last_error:gsub("%s", "_"))) end
end

return M
