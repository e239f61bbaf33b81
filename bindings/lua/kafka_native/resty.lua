-- kafka_native.resty: one producer and one consumer per nginx worker
-- (OpenResty, or Debian's nginx + libnginx-mod-http-lua), wired the way
-- docs/openresty.md explains, so an application writes only its handlers:
--
--   init_worker_by_lua_block {
--     require("kafka_native.resty").init_worker({
--       producer = { ["bootstrap.servers"] = "...", ["linger.ms"] = 5 },
--       producer_options = { on_delivery = function(r) ... end },
--       consumer = { ["bootstrap.servers"] = "...", ["group.id"] = "app" },
--       subscribe = { "orders" },
--       handler = function(records, consumer) ... end,
--       socket_dir = "/run/app",
--     })
--   }
--   exit_worker_by_lua_block { require("kafka_native.resty").exit_worker() }
--   log_by_lua_block { require("kafka_native.resty").send("access", ngx.var.request_uri) }
--
-- What it does for a worker:
--  * creates the clients in init_worker (after the fork: a client made
--    in init_by_lua raises "created before fork" in the worker), the
--    producer with max.block.ms = 0 unless told otherwise, so send()
--    never blocks or yields and works in every phase (log_by_lua too:
--    a record to a topic without metadata yet waits inside the
--    producer, not in the handler);
--  * serves delivery reports from a light thread that sleeps on the
--    producer's readiness socket (a byte when reports are queued), so an
--    idle worker runs no timer and a report runs as soon as it exists;
--  * runs the consumer loop in a light thread that sleeps on the
--    consumer's readiness socket, hands each batch to `handler` (which
--    may yield: it is ordinary Lua in a timer, not a library callback),
--    then commit_async() when the consumer has a group and auto-commit is
--    off (commit = "async", the default then) or commit = "async";
--  * on shutdown and reload (nginx -s quit / reload): a timer that fires
--    only prematurely wakes both loops at once; the consumer loop closes
--    its consumer (close_timeout_ms: final commit, LeaveGroup);
--    exit_worker() flushes the producer for at most flush_timeout_ms,
--    serving the last reports, then closes it. Records still unsent then
--    fail with "_CLOSED" through their callbacks (the one bound on a
--    worker's exit; nginx's worker_shutdown_timeout bounds the rest).
--
-- Library callbacks (on_delivery, rebalance listener, on_commit, log,
-- serializers) run inside poll/flush/close and cannot yield: no
-- cosocket, ngx.sleep or semaphore wait inside them. Post to an
-- ngx.semaphore or push to a queue there, and do the I/O in a light
-- thread (docs/openresty.md, "Callbacks cannot yield").
local kafka = require("kafka_native")

local M = {}

-- Per worker (module state lives in the worker's Lua VM).
local cfg
local producer, consumer
local producer_closed = false
local stats = { reports = 0, report_errors = 0, batches = 0, records = 0, handler_errors = 0,
                commit_errors = 0, wakeups = 0 }

local function log(level, ...)
  ngx.log(level, "kafka_native.resty: ", ...)
end

local function copy(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

-- Waits on a readiness socket (a connected cosocket) for one byte, at
-- most idle_check_ms; returns false when the socket is gone.
local function wait_ready(sock)
  local _, err = sock:receive(1)
  if err and err ~= "timeout" then return false, err end
  stats.wakeups = stats.wakeups + 1
  return true
end

-- Connects a cosocket to client's readiness socket (listen, connect,
-- accept). Returns the cosocket, or nil, message.
local function ready_socket(client)
  local path, err = client:ready_listen(cfg.socket_dir)
  if not path then return nil, err end
  local sock = ngx.socket.tcp()
  local ok, cerr = sock:connect("unix:" .. path)
  if not ok then return nil, "readiness socket " .. path .. ": " .. tostring(cerr) end
  local aok, aerr = client:ready_accept()
  if not aok then
    sock:close()
    return nil, aerr
  end
  sock:settimeout(cfg.idle_check_ms or 1000)
  return sock
end

-- Delivery reports: poll(0) whenever the readiness byte comes, for the
-- worker's life.
local function reporter(premature)
  if premature or not producer then return end
  local sock, err = ready_socket(producer)
  if not sock then
    -- No readiness socket (socket_dir not writable, ...): still serve
    -- reports, by polling every 50 ms (an idle worker then wakes 20
    -- times a second).
    log(ngx.ERR, "producer readiness socket: ", err, "; polling for delivery reports every 50 ms instead")
    while not producer_closed and not ngx.worker.exiting() do
      local n, perr = producer:poll(0)
      if not n then
        stats.report_errors = stats.report_errors + 1
        log(ngx.ERR, "delivery callback failed: ", perr)
      end
      ngx.sleep(0.05)
    end
    return
  end
  while not producer_closed do
    local n, perr = producer:poll(0)
    if not n then
      stats.report_errors = stats.report_errors + 1
      log(ngx.ERR, "delivery callback failed: ", perr)
    end
    if ngx.worker.exiting() then break end
    if not wait_ready(sock) then break end
  end
  sock:close()
end

local function consume_loop(premature)
  if premature or not consumer then return end
  local sock, err = ready_socket(consumer)
  if not sock then
    log(ngx.ERR, "consumer readiness socket: ", err)
    consumer:close(cfg.close_timeout_ms or 5000)
    consumer = nil
    return
  end
  local commit_async = cfg.commit == "async"
  while not ngx.worker.exiting() do
    while true do
      local recs, perr, code = consumer:poll(0)
      if not recs then
        if code ~= "_WAKEUP" then log(ngx.ERR, "poll: ", perr, " (", code, ")") end
        break
      end
      if #recs == 0 then break end
      stats.batches = stats.batches + 1
      stats.records = stats.records + #recs
      if cfg.handler then
        local ok, herr = pcall(cfg.handler, recs, consumer)
        if not ok then
          stats.handler_errors = stats.handler_errors + 1
          log(ngx.ERR, "handler: ", herr)
        end
      end
      if commit_async then
        local ok, cerr = consumer:commit_async()
        if not ok then
          stats.commit_errors = stats.commit_errors + 1
          log(ngx.WARN, "commit_async: ", cerr)
        end
      end
      ngx.sleep(0.001) -- let requests run between batches (sleep(0) warns without the delayed-events patch)
    end
    if not wait_ready(sock) then break end
  end
  sock:close()
  local c = consumer
  consumer = nil
  local ok, cerr = c:close(cfg.close_timeout_ms or 5000)
  if not ok then log(ngx.ERR, "consumer close: ", cerr) end
end

-- init_worker_by_lua: creates this worker's clients and starts their
-- light threads. conf: producer, producer_options, consumer,
-- consumer_options, subscribe (topics) or assign (partitions),
-- listener (rebalance listener table), handler(records, consumer),
-- commit ("async" or false), socket_dir, idle_check_ms (default 1000),
-- flush_timeout_ms (default 5000), close_timeout_ms (default 5000).
-- Returns true, or nil, message.
function M.init_worker(conf)
  cfg = conf
  if conf.producer then
    local pconf = copy(conf.producer)
    if pconf["max.block.ms"] == nil then pconf["max.block.ms"] = 0 end
    local err
    producer, err = kafka.producer(pconf, conf.producer_options)
    if not producer then return nil, "producer: " .. tostring(err) end
    producer_closed = false
    local ok, terr = ngx.timer.at(0, reporter)
    if not ok then log(ngx.ERR, "cannot start the delivery reporter: ", terr) end
  end
  if conf.consumer then
    local err
    consumer, err = kafka.consumer(conf.consumer, conf.consumer_options)
    if not consumer then return nil, "consumer: " .. tostring(err) end
    if cfg.commit == nil and conf.consumer["group.id"] and
        tostring(conf.consumer["enable.auto.commit"]) == "false" then
      cfg.commit = "async"
    end
    local ok, serr
    if conf.subscribe then
      ok, serr = consumer:subscribe(conf.subscribe, conf.listener)
    elseif conf.assign then
      ok, serr = consumer:assign(conf.assign)
    else
      ok = true
    end
    if not ok then return nil, "consumer: " .. tostring(serr) end
    local tok, terr = ngx.timer.at(0, consume_loop)
    if not tok then return nil, "cannot start the consumer loop: " .. tostring(terr) end
  end
  -- Fires only when the worker shuts down (pending timers then run
  -- with premature = true): wakes the consumer loop at once.
  local sok, serr = ngx.timer.at(365 * 24 * 3600, function(premature)
    if premature and consumer then consumer:wakeup() end
  end)
  if not sok then log(ngx.WARN, "no shutdown timer (", serr, "): loops stop at their next idle check") end
  return true
end

-- This worker's producer (nil before init_worker or after exit_worker).
function M.producer()
  if producer_closed then return nil end
  return producer
end

-- This worker's consumer (nil when none, or once its loop ended).
function M.consumer()
  return consumer
end

-- Sends without blocking or yielding, from any phase (log_by_lua
-- included). Returns true, or nil, message, code ("_QUEUE_FULL" when
-- buffer.memory is full: the caller decides to drop, spill or retry
-- after ngx.sleep where yielding is allowed).
function M.send(topic, value, opts)
  if not producer or producer_closed then
    return nil, "no producer in this worker (init_worker not run, or the worker is exiting)", "_STATE"
  end
  return producer:send(topic, value, opts)
end

-- Counters of this worker's loops, and the producer's outstanding
-- records.
function M.stats()
  local s = copy(stats)
  s.outstanding = (producer and not producer_closed) and producer:outstanding() or 0
  s.consumer = consumer ~= nil
  return s
end

-- exit_worker_by_lua: flushes the producer for at most
-- flush_timeout_ms (its reports run here), then closes it; closes the
-- consumer if its loop did not. Returns true, or nil, message.
function M.exit_worker()
  local ok, err = true, nil
  if producer and not producer_closed then
    local p = producer
    producer_closed = true
    local fok, ferr = p:flush(cfg.flush_timeout_ms or 5000)
    if not fok then
      ok, err = nil, "flush: " .. tostring(ferr)
      log(ngx.ERR, "producer flush on exit: ", ferr)
    end
    local cok, cerr = p:close(0) -- what flush left fails with _CLOSED, callbacks run
    if not cok and ok then ok, err = nil, "close: " .. tostring(cerr) end
    producer = nil
  end
  if consumer then
    local c = consumer
    consumer = nil
    local cok, cerr = c:close(cfg.close_timeout_ms or 5000)
    if not cok and ok then ok, err = nil, "consumer close: " .. tostring(cerr) end
  end
  return ok, err
end

return M
