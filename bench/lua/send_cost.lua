-- bench/lua/send_cost.lua: the Lua binding's per-record cost, made to be
-- counted in instructions (valgrind --tool=callgrind, bench/send-cost):
-- one producer:send then producer:poll(0) per record, as an OpenResty
-- request handler sending one record per request does (kafka_native.resty
-- serves reports from poll). WARMUP records are sent and flushed first,
-- so two runs that differ only in NUM differ only by per-record work.
--
--   lua5.4 bench/lua/send_cost.lua BOOTSTRAP TOPIC NUM SIZE WARMUP
--          callback|nocallback [k=v ...]
local kafka = require("kafka_native")

local bootstrap, topic, num, size, warmup, mode =
  arg[1], arg[2], tonumber(arg[3]), tonumber(arg[4]), tonumber(arg[5]), arg[6]
if not (bootstrap and topic and num and size and warmup and mode) then
  io.stderr:write("usage: send_cost.lua BOOTSTRAP TOPIC NUM SIZE WARMUP callback|nocallback [k=v ...]\n")
  os.exit(2)
end
local conf = { ["bootstrap.servers"] = bootstrap }
for i = 7, #arg do
  local k, v = arg[i]:match("^([^=]+)=(.*)$")
  conf[k] = v
end
local ok, failed = 0, 0
local opts
if mode == "callback" then
  opts = { on_delivery = function(r)
    if r.error then failed = failed + 1 else ok = ok + 1 end
  end }
end
local p = assert(kafka.producer(conf, opts))
local value = string.rep("x", size)

local function send_n(n)
  for _ = 1, n do
    while true do
      local sok, err, code = p:send(topic, value)
      if sok then break end
      if code ~= "_QUEUE_FULL" then error(err) end
      p:poll(1)
    end
    p:poll(0)
  end
end

send_n(warmup)
assert(p:flush(60000))
send_n(num)
assert(p:flush(60000))
local m = p:metrics()
assert(p:close())
print(("records %d failed %d batches %d requests %d reports %d"):format(
  m.records_sent, m.records_failed, m.batches_sent, m.requests_sent, ok))
if m.records_failed > 0 or failed > 0 or (mode == "callback" and ok ~= num + warmup) then os.exit(1) end
