-- bench/lua/producer_perf.lua: the producer benchmark through the Lua
-- binding: NUM values of SIZE random upper-case letters (one string, as
-- Java's ProducerPerformance), null keys, producer:send as fast as it
-- takes them, a delivery callback per record, then flush. Latency of a
-- record = report time - its CreateTime (stamped by the library at send),
-- sampled like Java (at most ~500,000 samples). Extra settings come as
-- k=v arguments (bench/run passes acks=all enable.idempotence=true).
-- A minimal script for bench/run; bench/lua_producer_perf.lua (written in
-- parallel) may replace it.
--
--   lua5.4 bench/lua/producer_perf.lua BOOTSTRAP TOPIC NUM SIZE [k=v ...]
-- Output: Java's final line ("N records sent, R records/sec (M MB/sec),
-- ... 50th, 95th, 99th, 99.9th."), MB = 1024^2 bytes.
local kafka = require("kafka_native")
local system = require("system")

local bootstrap, topic, num, size = arg[1], arg[2], tonumber(arg[3]), tonumber(arg[4])
if not (bootstrap and topic and num and size) then
  io.stderr:write("usage: producer_perf.lua BOOTSTRAP TOPIC NUM SIZE [k=v ...]\n")
  os.exit(2)
end
local conf = { ["bootstrap.servers"] = bootstrap }
for i = 5, #arg do
  local k, v = arg[i]:match("^([^=]+)=(.*)$")
  if not k then
    io.stderr:write("not k=v: ", arg[i], "\n")
    os.exit(2)
  end
  conf[k] = v
end

math.randomseed(os.time())
local chars = {}
for i = 1, size do chars[i] = string.char(65 + math.random(0, 25)) end
local payload = table.concat(chars)

local sampling = math.max(1, num // math.min(num, 500000))
local lat, count, errors, iteration, total_lat, max_lat = {}, 0, 0, 0, 0, 0
local wall = system.gettime
local function on_delivery(r)
  if r.error then
    errors = errors + 1
    if errors <= 10 then io.stderr:write("delivery failed: ", r.error, ": ", tostring(r.message), "\n") end
    return
  end
  local l = math.floor(wall() * 1000) - r.timestamp
  count = count + 1
  total_lat = total_lat + l
  if l > max_lat then max_lat = l end
  if iteration % sampling == 0 then lat[#lat + 1] = l end
  iteration = iteration + 1
end

local producer = assert(kafka.producer(conf, { on_delivery = on_delivery }))
local now = system.monotime
local start = now()
for i = 1, num do
  local ok, msg, code = producer:send(topic, payload)
  while not ok do
    if code ~= "_QUEUE_FULL" then
      io.stderr:write("send failed: ", tostring(code), ": ", tostring(msg), "\n")
      os.exit(1)
    end
    producer:poll(10)
    ok, msg, code = producer:send(topic, payload)
  end
  if i % 1024 == 0 then producer:poll(0) end
end
assert(producer:flush())
local elapsed = now() - start
producer:close()

table.sort(lat)
local function pct(p)
  if #lat == 0 then return 0 end
  return lat[math.min(#lat, math.floor(p * #lat) + 1)]
end
print(string.format("%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, "
  .. "%d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.",
  count, count / elapsed, num * size / 1048576 / elapsed, count > 0 and total_lat / count or 0, max_lat,
  pct(0.5), pct(0.95), pct(0.99), pct(0.999)))
if errors > 0 or count < num then os.exit(1) end
