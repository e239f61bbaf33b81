-- spec/telemetry_spec.lua: client telemetry (KIP-714) from Lua against
-- a real broker whose recorder plugin (tools/java/TelemetryRecorder.java)
-- appends every push it receives to KN_BROKER_DIR/telemetry.log:
-- client:client_instance_id(), kafka.app_metric{...} registered with
-- register_metric_for_subscription, the pushed values under that id, a
-- terminating push on close, and enable.metrics.push=false refused.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local pid = tostring(os.time() % 1000000)
local prefix = "kn-tel-lua-" .. pid .. "-"
local sub = "kn-test-telemetry-lua-" .. pid

local function sleep(s) os.execute("sleep " .. s) end

-- The recorder's lines about one client instance.
local function lines_for(id)
  local got = {}
  local dir = assert(os.getenv("KN_BROKER_DIR"), "KN_BROKER_DIR unset: run under tools/kafka/broker env")
  local f = io.open(dir .. "/telemetry.log")
  if not f then return got end
  for line in f:lines() do
    if line:find(" instance=" .. id .. " ", 1, true) then got[#got + 1] = line end
  end
  f:close()
  return got
end

-- The total of one metric over those lines (deltas add up; a
-- cumulative point is the total so far).
local function total(lines, name)
  local sum
  for _, l in ipairs(lines) do
    if l:find(" name=" .. name .. " ", 1, true) then
      local v = tonumber(l:match(" value=(%S+)"))
      if l:find(" temporality=DELTA ", 1, true) then sum = (sum or 0) + v else sum = v end
    end
  end
  return sum
end

describe("kafka_native client telemetry", function()
  local admin

  local function subscription(set)
    local function v(x) if set then return x end end
    local op = set and "set" or "delete"
    local res = assert(admin:incremental_alter_configs({ client_metrics = { [sub] = {
      { op = op, name = "metrics", value = v("org.apache.kafka.producer.,org.apache.kafka.luatest.") },
      { op = op, name = "interval.ms", value = v(1000) },
      { op = op, name = "match", value = v("client_id=" .. prefix .. ".*") },
    } } }))
    assert.are.same({}, res.client_metrics[sub])
  end

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
    subscription(true)
  end)

  teardown(function()
    subscription(false)
    admin:close()
  end)

  it("pushes the subscribed metrics under the client instance id", function()
    local topic = helper.topic("telemetry")
    helper.create_topic(admin, topic)
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap(),
      ["client.id"] = prefix .. "p" }))
    local m = kafka.app_metric({ group = "luatest-metrics", name = "jobs-total", kind = "sum",
      description = "Jobs done.", tags = { queue = "q1" } })
    assert.is_true(producer:register_metric_for_subscription(m))
    m:add(3):add(4)
    local id = assert(producer:client_instance_id(30000))
    assert.are.equal(22, #id)
    for i = 1, 10 do assert(producer:send(topic, "v" .. i)) end
    assert(producer:flush(30000))
    local lines = helper.wait_for(function() return lines_for(id) end, function(l)
      -- sends count per attempt: a retried record is in record.retry.total too
      return total(l, "org.apache.kafka.producer.record.send.total")
          == 10 + (total(l, "org.apache.kafka.producer.record.retry.total") or 0)
        and total(l, "org.apache.kafka.luatest.jobs.total") == 7
    end)
    for _, l in ipairs(lines) do
      if l:match("^POINT") then
        local name = l:match(" name=(%S+)")
        assert.is_truthy(name:find("^org%.apache%.kafka%.producer%.") or name:find("^org%.apache%.kafka%.luatest%."))
      end
      assert.is_falsy(l:match("^BAD"))
    end
    assert.is_true(producer:unregister_metric_from_subscription(m))
    producer:close()
    local term = 0
    for _, l in ipairs(lines_for(id)) do
      if l:find("^PUSH .* terminating=true") then term = term + 1 end
    end
    assert.are.equal(1, term)
  end)

  it("refuses client_instance_id with enable.metrics.push=false", function()
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap(),
      ["client.id"] = prefix .. "off", ["enable.metrics.push"] = false }))
    local id, msg, code = producer:client_instance_id(1000)
    assert.is_nil(id)
    assert.are.equal("_STATE", code)
    assert.is_truthy(msg:find("enable.metrics.push", 1, true))
    producer:close()
    -- The admin client does not push by default, as in Java.
    local _, _, acode = admin:client_instance_id(0)
    assert.are.equal("_STATE", acode)
    assert.has_error(function() kafka.app_metric({ name = "x" }) end)
    assert.has_error(function() kafka.app_metric({ group = "g", name = "x", kind = "histogram" }) end)
  end)

  it("gives a consumer its own client instance id", function()
    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = helper.bootstrap(),
      ["client.id"] = prefix .. "c" }))
    local id = assert(consumer:client_instance_id(30000))
    assert.are.equal(22, #id)
    consumer:close()
  end)
end)
