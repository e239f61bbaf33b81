-- spec/admin_offsets_spec.lua: admin:list_offsets against a real broker
-- (earliest, latest, max_timestamp, by timestamp, earliest_local,
-- latest_tiered; a missing topic failing alone), a group reset to a
-- timestamp honoured by a Lua consumer, and examples/lua/group_lag.lua.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local RECORDS = 10

describe("kafka_native.admin list_offsets", function()
  local admin, topic, base

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
    topic = helper.topic("admin-offsets")
    local res = assert(admin:create_topics({ { name = topic, partitions = 2 } }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
    base = helper.timestamp_base() - 60000
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }))
    for i = 0, RECORDS - 1 do
      assert(producer:send(topic, "v" .. i, { partition = 0, timestamp = base + i * 1000 }))
    end
    assert(producer:flush(30000))
    assert(producer:close())
  end)

  teardown(function()
    admin:close()
  end)

  it("finds offsets by spec, from each partition's leader", function()
    local missing = helper.topic("offsets-missing")
    local got = assert(admin:list_offsets({
      [topic] = { [0] = "earliest", [1] = "latest" },
      [missing] = { [0] = "latest" },
    }))
    assert.are.equal(0, got[topic][0].offset)
    assert.are.equal(0, got[topic][1].offset)
    assert.is_number(got[topic][0].leader_epoch)
    assert.are.equal("UNKNOWN_TOPIC_OR_PARTITION", got[missing][0].error)

    local function one(spec, opts)
      return assert(admin:list_offsets({ [topic] = { [0] = spec } }, opts))[topic][0]
    end
    assert.are.equal(RECORDS, one("latest", { isolation_level = "read_committed" }).offset)
    local max = one("max_timestamp")
    assert.are.equal(RECORDS - 1, max.offset)
    assert.are.equal(base + (RECORDS - 1) * 1000, max.timestamp)
    local by_ts = one(base + 3500)
    assert.are.equal(4, by_ts.offset)
    assert.are.equal(base + 4000, by_ts.timestamp)
    assert.is_nil(one(base + RECORDS * 1000).offset) -- after the last record
    assert.are.equal(0, one("earliest_local").offset)
    assert.is_nil(one("latest_tiered").offset) -- no tiered storage here

    assert.has_error(function() admin:list_offsets({ [topic] = { [0] = "soonest" } }) end)
    assert.has_error(function() admin:list_offsets({ [topic] = { [0] = -7 } }) end)
    assert.has_error(function() admin:list_offsets({ [topic] = { [0] = "latest" } }, { isolation_level = "x" }) end)
  end)

  it("resets a group to a timestamp, and the lag example reports it", function()
    local group = helper.topic("g-ts")
    local at = assert(admin:list_offsets({ [topic] = { [0] = base + 6000 } }))[topic][0].offset
    assert.are.equal(6, at)
    local res = assert(admin:alter_consumer_group_offsets(group, { [topic] = { [0] = at } }))
    assert.are.same({}, res[topic][0])

    -- the lag report, in another process: 10 - 6 = 4 behind
    local interp = ({ ["5.4"] = "lua5.4", ["5.3"] = "lua5.3", ["5.1"] = "lua5.1", jit = "luajit" })[helper.abi]
    local pipe = assert(io.popen(string.format("LUA_CPATH='%s;;' %s examples/lua/group_lag.lua %s 2>&1",
      helper.cpath, interp, group)))
    local out = pipe:read("*a")
    pipe:close()
    local function esc(s) return (s:gsub("%p", "%%%0")) end
    assert.matches(esc(group) .. "%s+" .. esc(topic) .. "%s+0%s+6%s+10%s+4", out)
    assert.matches(esc(group) .. "%s+total lag 4", out)

    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = helper.bootstrap(), ["group.id"] = group,
      ["auto.offset.reset"] = "earliest" }))
    assert(consumer:subscribe({ topic }))
    local deadline, first = os.time() + 60, nil
    repeat
      local recs = assert(consumer:poll(200))
      if recs[1] then first = recs[1].offset end
    until first or os.time() > deadline
    consumer:close()
    assert.are.equal(6, first)
  end)
end)
