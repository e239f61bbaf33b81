-- examples/lua/produce_consume.lua: produce a few records with delivery
-- reports, then read them back.
--
--   KAFKA_BOOTSTRAP=127.0.0.1:9092 lua5.4 examples/lua/produce_consume.lua [topic] [count]
--
-- Values are tables serialized to JSON by the producer's value_serializer
-- (lua-cjson when it is installed, else the tiny encoder below). Consumer groups are not implemented yet,
-- so the consumer uses manual assignment: it asks for the topic's
-- partitions, assigns them all from the beginning and polls until it has
-- seen every record it produced.
local kafka = require("kafka_native")

local bootstrap = os.getenv("KAFKA_BOOTSTRAP") or "127.0.0.1:9092"
local topic = arg[1] or ("kn-demo-" .. os.time())
local count = tonumber(arg[2] or "10")

-- JSON: lua-cjson if present, else enough of JSON for flat tables of
-- strings, numbers and booleans.
local ok, cjson = pcall(require, "cjson")
local encode
if ok then
  encode = cjson.encode
else
  local function quote(s)
    return '"' .. s:gsub('[%c"\\]', function(c)
      return string.format("\\u%04x", c:byte())
    end) .. '"'
  end
  encode = function(t)
    local keys = {}
    for k in pairs(t) do keys[#keys + 1] = k end
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do
      local v = t[k]
      local json = type(v) == "string" and quote(v) or tostring(v)
      parts[#parts + 1] = quote(k) .. ":" .. json
    end
    return "{" .. table.concat(parts, ",") .. "}"
  end
end

-- The topic (3 partitions), created with the admin client.
local admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
local created = assert(admin:create_topics({ { name = topic, partitions = 3 } }))
if created[topic].error and created[topic].error ~= "TOPIC_ALREADY_EXISTS" then
  error(created[topic].message)
end
assert(admin:wait_for_topics({ topic }, 30000))
admin:close()

-- Produce: send() only queues; delivery reports come back through
-- on_delivery from poll/flush/close, on this thread.
local delivered, failed = 0, 0
local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap, ["linger.ms"] = 5 }, {
  value_serializer = encode, -- send() takes tables; nil values stay null
  on_delivery = function(report)
    if report.error then
      failed = failed + 1
      print(string.format("  not delivered: %s (%s)", report.message, report.error))
    else
      delivered = delivered + 1
      print(string.format("  delivered to %s [%d] at offset %d", report.topic, report.partition, report.offset))
    end
  end,
}))
print(string.format("producing %d records to %s (%s)", count, topic, ok and "lua-cjson" or "built-in JSON"))
for i = 1, count do
  local value = { n = i, word = "record-" .. i, even = (i % 2 == 0) }
  print("  send " .. encode(value))
  assert(producer:send(topic, value, { key = "user-" .. (i % 4), headers = { source = "demo" } }))
  producer:poll(0) -- serve whatever reports are ready
end
assert(producer:flush(30000))
assert(producer:close())
print(string.format("delivered %d, failed %d", delivered, failed))

-- Consume: manual assignment of every partition, from the beginning.
local consumer = assert(kafka.consumer({
  ["bootstrap.servers"] = bootstrap,
  ["auto.offset.reset"] = "earliest",
}))
local partitions = assert(consumer:partitions_for(topic, 30000))
for _, tp in ipairs(partitions) do tp.offset = "beginning" end
assert(consumer:assign(partitions))

print("consuming")
local seen = 0
local deadline = os.time() + 30
while seen < delivered and os.time() < deadline do
  -- records() yields every record of successive polls and ends when a
  -- poll returns nothing within the timeout.
  for record in consumer:records(1000) do
    seen = seen + 1
    print(string.format("  %s [%d] offset %d key=%s value=%s", record.topic, record.partition,
      record.offset, tostring(record.key), tostring(record.value)))
  end
end
consumer:close()
print(string.format("consumed %d of %d", seen, delivered))
os.exit(seen == delivered and failed == 0 and 0 or 1)
