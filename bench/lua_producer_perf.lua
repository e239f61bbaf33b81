-- bench/lua_producer_perf.lua: the Lua side of kn_producer_perf: sends
-- --num-records records of --record-size random bytes as fast as send
-- accepts them, with a delivery callback per record (as
-- kn_producer_perf has; --no-callback leaves it out) and poll(0)
-- every 1024 sends, then flush. Prints records/s and MB/s.
--
--   LUA_CPATH='build/lua/5.4/?.so' lua5.4 bench/lua_producer_perf.lua \
--     --bootstrap-server 127.0.0.1:9092 --topic perf --num-records 5000000 --record-size 10 \
--     [--producer-props k=v ...] [--no-callback]
local kafka = require("kafka_native")

local opts = { props = {} }
local i = 1
while i <= #arg do
  local a, v = arg[i], arg[i + 1]
  if a == "--bootstrap-server" then opts.bootstrap = v
  elseif a == "--topic" then opts.topic = v
  elseif a == "--num-records" then opts.n = tonumber(v)
  elseif a == "--record-size" then opts.size = tonumber(v)
  elseif a == "--no-callback" then opts.no_cb = true; i = i - 1
  elseif a == "--producer-props" then
    local k, val = v:match("^([^=]+)=(.*)$")
    opts.props[k] = val
  else error("unknown argument " .. a) end
  i = i + 2
end
assert(opts.bootstrap and opts.topic and opts.n and opts.size, "need --bootstrap-server, --topic, --num-records, --record-size")
local socket_ok, socket = pcall(require, "socket")
local wall = socket_ok and socket.gettime or os.time

local conf = { ["bootstrap.servers"] = opts.bootstrap }
for k, v in pairs(opts.props) do conf[k] = v end
local delivered, failed = 0, 0
local producer = assert(kafka.producer(conf, not opts.no_cb and {
  on_delivery = function(r) if r.error then failed = failed + 1 else delivered = delivered + 1 end end,
} or nil))

local chars = {}
for j = 1, opts.size do chars[j] = string.char(65 + math.random(0, 25)) end
local payload = table.concat(chars)
local topic, send, poll = opts.topic, producer.send, producer.poll

local start = wall()
local cpu0 = os.clock()
for j = 1, opts.n do
  local ok, err, code = send(producer, topic, payload)
  if not ok then error("send failed: " .. tostring(code) .. ": " .. tostring(err)) end
  if j % 1024 == 0 then poll(producer, 0) end
end
assert(producer:flush())
local elapsed = wall() - start
local cpu = os.clock() - cpu0
producer:close()
print(string.format("%s lua_producer_perf: %d records sent, %.1f records/sec, %.2f MB/sec, %.2f s, CPU %.2f s%s",
  type(jit) == "table" and jit.version or _VERSION, opts.n, opts.n / elapsed,
  opts.n * opts.size / elapsed / (1024 * 1024), elapsed, cpu,
  opts.no_cb and " (no callback)" or string.format(" (%d delivered, %d failed)", delivered, failed)))
