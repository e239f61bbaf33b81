-- examples/lua/json_producer.lua: a producer with JSON serializers and
-- delivery reports, and a consumer reading the same records back with
-- JSON deserializers. Uses lua-cjson (Debian: lua-cjson) when it is
-- installed, else the tiny encoder/decoder below (enough for this
-- example: flat tables of strings, numbers and booleans).
--
--   KAFKA_BOOTSTRAP=127.0.0.1:9092 lua5.4 examples/lua/json_producer.lua [topic] [count]
local kafka = require("kafka_native")

local ok, cjson = pcall(require, "cjson")
local encode, decode
if ok then
  encode, decode = cjson.encode, cjson.decode
else
  -- Flat objects only: {"k": "v", "n": 1, "b": true}.
  encode = function(t)
    local parts = {}
    for k, v in pairs(t) do
      local vs = type(v) == "string" and string.format("%q", v) or tostring(v)
      parts[#parts + 1] = string.format("%q:%s", tostring(k), vs)
    end
    table.sort(parts)
    return "{" .. table.concat(parts, ",") .. "}"
  end
  decode = function(s)
    local t = {}
    for k, v in s:gmatch('"([^"]-)":("[^"]-"[^,}]*)') do t[k] = v:sub(2, -2) end
    for k, v in s:gmatch('"([^"]-)":([%d%.%-]+)') do t[k] = tonumber(v) end
    for k, v in s:gmatch('"([^"]-)":(%a+)') do t[k] = v == "true" end
    return t
  end
end

local bootstrap = os.getenv("KAFKA_BOOTSTRAP") or "127.0.0.1:9092"
local topic = arg[1] or ("kn-json-example-" .. os.time())
local count = tonumber(arg[2] or "10")

local admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
local created = assert(admin:create_topics({ { name = topic, partitions = 3 } }))
if created[topic].error and created[topic].error ~= "TOPIC_ALREADY_EXISTS" then
  error(created[topic].message)
end
assert(admin:wait_for_topics({ topic }, 30000))
admin:close()

-- Delivery reports run inside poll/flush/close, on this thread.
local delivered, failed = 0, 0
local producer = assert(kafka.producer({
  ["bootstrap.servers"] = bootstrap,
  ["linger.ms"] = 5,
  ["compression.type"] = "zstd",
}, {
  key_serializer = function(id) return tostring(id) end,
  value_serializer = function(order) return encode(order) end,
  on_delivery = function(report)
    if report.error then
      failed = failed + 1
      io.stderr:write(string.format("order not delivered: %s (%s)\n", report.message, report.error))
    else
      delivered = delivered + 1
    end
  end,
}))

for i = 1, count do
  local order = { id = i, item = "widget-" .. (i % 4), quantity = i * 2, paid = i % 2 == 0 }
  -- The key (the order id) picks the partition: murmur2, as Java.
  assert(producer:send(topic, order, { key = order.id, headers = { source = "json_producer.lua" } }))
end
assert(producer:flush(30000))
print(string.format("%d orders delivered, %d failed", delivered, failed))
producer:close()

-- Read them back, decoded.
local consumer = assert(kafka.consumer({
  ["bootstrap.servers"] = bootstrap,
  ["auto.offset.reset"] = "earliest",
}, {
  key_deserializer = function(bytes) return tonumber(bytes) end,
  value_deserializer = function(bytes) return decode(bytes) end,
}))
assert(consumer:assign(assert(consumer:partitions_for(topic))))
local seen = 0
for record in consumer:records(2000) do
  local order = record.value
  print(string.format("p%d@%d order %d: %d x %s%s", record.partition, record.offset, record.key,
    order.quantity, order.item, order.paid and " (paid)" or ""))
  seen = seen + 1
end
consumer:close()
assert(seen >= count, string.format("read %d of %d orders", seen, count))
