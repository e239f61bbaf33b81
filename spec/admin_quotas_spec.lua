-- spec/admin_quotas_spec.lua: admin:alter_client_quotas and
-- admin:describe_client_quotas against a real broker, on entities named
-- for this run only (defaults would throttle the other specs), and a
-- producer throttled by its client.id's quota (KIP-219) reporting the
-- broker's throttle in metrics() and losing nothing.
local helper = require("spec.helper")
local kafka = require("kafka_native")

describe("kafka_native.admin client quotas", function()
  local admin

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)

  teardown(function()
    admin:close()
  end)

  -- quotas apply from the metadata log a moment after the alter
  local function wait_user(user, check)
    return helper.wait_for(function()
      return assert(admin:describe_client_quotas({ { type = "user", name = user } }, { strict = true }))
    end, check)
  end

  it("sets, describes and removes quotas per entity", function()
    local user, client, other = helper.topic("q-user"), helper.topic("q-client"), helper.topic("q-other")
    local res = assert(admin:alter_client_quotas({
      { entity = { user = user }, set = { producer_byte_rate = 1024, consumer_byte_rate = 2048 } },
      { entity = { ["client-id"] = client }, set = { request_percentage = 50 } },
      { entity = { user = user, ["client-id"] = client }, set = { producer_byte_rate = 4096 } },
      { entity = { user = other }, set = { no_such_quota = 1 } },
    }))
    assert.are.same({ user = user }, res[1].entity)
    assert.is_nil(res[1].error, res[1].message)
    assert.is_nil(res[3].error, res[3].message)
    assert.is_string(res[4].error)
    assert.matches("no_such_quota", res[4].message)

    local got = wait_user(user, function(g) return #g == 1 and g[1].values.consumer_byte_rate == 2048 end)
    assert.are.same({ user = user }, got[1].entity)
    assert.are.same({ producer_byte_rate = 1024, consumer_byte_rate = 2048 }, got[1].values)
    assert.are.equal(2, #assert(admin:describe_client_quotas({ { type = "user", name = user } })))
    local found
    for _, q in ipairs(assert(admin:describe_client_quotas({ { type = "client-id" } }, { strict = true }))) do
      if q.entity["client-id"] == client then found = q.values.request_percentage end
    end
    assert.are.equal(50, found)

    res = assert(admin:alter_client_quotas({
      { entity = { user = user }, remove = { "producer_byte_rate", "consumer_byte_rate" } },
      { entity = { user = user, ["client-id"] = client }, remove = { "producer_byte_rate" } },
      { entity = { ["client-id"] = client }, remove = { "request_percentage" } },
    }))
    for _, r in ipairs(res) do assert.is_nil(r.error, r.message) end
    wait_user(user, function(g) return #g == 0 end)

    local none, _, code = admin:describe_client_quotas({ { type = "no-such-type" } })
    assert.is_nil(none)
    assert.is_string(code)
    assert.has_error(function() admin:alter_client_quotas({ { entity = {}, set = { a = 1 } } }) end)
    assert.has_error(function() admin:alter_client_quotas({ { entity = { user = "u" }, set = { a = "x" } } }) end)
  end)

  it("a producer over its client.id's quota is throttled and loses nothing", function()
    local client, topic = helper.topic("q-throttled"), helper.topic("q-throttle")
    local res = assert(admin:create_topics({ { name = topic, partitions = 1 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
    res = assert(admin:alter_client_quotas({
      { entity = { ["client-id"] = client }, set = { producer_byte_rate = 20480 } },
    }))
    assert.is_nil(res[1].error, res[1].message)
    helper.wait_for(function()
      return assert(admin:describe_client_quotas({ { type = "client-id", name = client } }, { strict = true }))
    end, function(g) return #g == 1 end)
    local reports = {}
    local producer = assert(kafka.producer({
      ["bootstrap.servers"] = helper.bootstrap(), ["client.id"] = client,
      ["linger.ms"] = 0, ["max.in.flight.requests.per.connection"] = 1,
    }, { on_delivery = function(report) reports[#reports + 1] = report end }))
    local big = string.rep("x", 100 * 1024)
    for _ = 1, 3 do assert(producer:send(topic, big, { partition = 0 })) end
    assert(producer:flush(60000))
    assert(producer:send(topic, "end", { partition = 0 })) -- waits out the last throttle
    assert(producer:flush(60000))
    local m = producer:metrics()
    assert(producer:close())
    assert.are.equal(4, #reports)
    for i, r in ipairs(reports) do
      assert.is_nil(r.error, r.message)
      assert.are.equal(i - 1, r.offset)
    end
    -- the broker throttled; our requests waited in the client, not in
    -- the broker's muted socket (their round trips stay short)
    assert.is_true(m.produce_throttle_time_max_ms > 0)
    assert.is_true(m.produce_throttle_time_avg_ms > 0)
    assert.is_true(m.request_latency_max_us / 1000 < m.produce_throttle_time_max_ms / 2,
      m.request_latency_max_us .. " us vs " .. m.produce_throttle_time_max_ms .. " ms")
    assert(admin:alter_client_quotas({ { entity = { ["client-id"] = client }, remove = { "producer_byte_rate" } } }))
    admin:delete_topics({ topic })
  end)
end)
