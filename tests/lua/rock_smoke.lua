-- tests/lua/rock_smoke.lua: what a user does after `luarocks make`:
-- only require "kafka_native" (found through LUA_CPATH in the rock
-- tree, never the build directory), then produce 100 records to a new
-- topic on $KAFKA_BOOTSTRAP and consume them back.
--   LUA_CPATH='<tree>/lib/lua/<ver>/?.so' lua rock_smoke.lua <tree>
local tree = assert(arg[1], "usage: rock_smoke.lua <rock tree>")
local kafka = require("kafka_native")
local found = package.searchpath and package.searchpath("kafka_native", package.cpath)
  or os.getenv("LUA_CPATH")
assert(found and found:sub(1, #tree) == tree, "kafka_native did not come from the rock tree: " .. tostring(found))

local bootstrap = os.getenv("KAFKA_BOOTSTRAP")
assert(bootstrap and bootstrap ~= "", "KAFKA_BOOTSTRAP is not set: start a broker with tools/kafka/broker start")
local topic = string.format("kn-rock-%s-%x-%d", (_VERSION:gsub("%W", "")), os.time(), math.random(1, 1e6))

local admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
local res = assert(admin:create_topics({ { name = topic, partitions = 1 } }, { timeout_ms = 30000 }))
assert(not res[topic].error, res[topic].message)
assert(admin:wait_for_topics({ topic }, 30000))

local ok, err = pcall(function()
  local delivered = 0
  local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap },
    { on_delivery = function(r) assert(not r.error, r.message); delivered = delivered + 1 end }))
  for i = 1, 100 do assert(producer:send(topic, "value-" .. i, { key = "k" .. i })) end
  assert(producer:flush(30000))
  assert(producer:close())
  assert(delivered == 100, "delivered " .. delivered)

  local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = bootstrap }))
  assert(consumer:assign({ { topic = topic, partition = 0, offset = "beginning" } }))
  local got = {}
  for _ = 1, 100 do
    for _, r in ipairs(assert(consumer:poll(500))) do got[#got + 1] = r end
    if #got >= 100 then break end
  end
  assert(consumer:close())
  assert(#got == 100, "consumed " .. #got)
  for i, r in ipairs(got) do
    assert(r.value == "value-" .. i and r.key == "k" .. i and r.offset == i - 1, "record " .. i)
  end
end)
admin:delete_topics({ topic })
admin:close()
assert(ok, err)
print(string.format("rock_smoke: %s: module %s produced and consumed 100 records", _VERSION, found))
