-- examples/lua/produce_consume.lua: produce a few records with delivery
-- reports, then read them back as a member of a consumer group.
--
--   KAFKA_BOOTSTRAP=127.0.0.1:9092 lua5.4 examples/lua/produce_consume.lua [topic] [count]
--
-- Values are tables serialized to JSON by the producer's value_serializer
-- (lua-cjson when it is installed, else the tiny encoder below). The
-- consumer subscribes to the topic in a fresh group with a rebalance
-- listener, polls until it has seen every record it produced, commits,
-- and leaves the group on close.
local kafka = require("kafka_native")

local bootstrap = os.getenv("KAFKA_BOOTSTRAP") or "127.0.0.1:9092"
local topic = arg[1] or ("kn-demo-" .. os.time())
local count = tonumber(arg[2] or "10")

-- JSON: lua-cjson if present, else enough of JSON for flat tables of
-- strings, numbers and booleans.
local ok, cjson = pcall(require, "cjson")
local encode
if ok then
  -- A serializer is called as fn(value, topic); cjson.encode takes
  -- exactly one argument.
  encode = function(v) return cjson.encode(v) end
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

-- Consume: join a fresh group; the coordinator assigns the partitions,
-- and the listener runs inside poll on this thread.
local group = "kn-demo-group-" .. os.time()
local consumer = assert(kafka.consumer({
  ["bootstrap.servers"] = bootstrap,
  ["group.id"] = group,
  ["auto.offset.reset"] = "earliest",
  ["enable.auto.commit"] = false,
}))
local function names(parts)
  local out = {}
  for _, p in ipairs(parts) do out[#out + 1] = p.topic .. "[" .. p.partition .. "]" end
  return table.concat(out, " ")
end
assert(consumer:subscribe({ topic }, {
  on_assigned = function(_, parts) print("  group " .. group .. " assigned " .. names(parts)) end,
  on_revoked = function(c, parts)
    assert(c:commit()) -- still ours: commit before they move
    print("  revoked " .. names(parts) .. " (committed)")
  end,
}))

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
assert(consumer:commit())
assert(consumer:close()) -- on_revoked, then LeaveGroup
print(string.format("consumed %d of %d", seen, delivered))
os.exit(seen == delivered and failed == 0 and 0 or 1)
