-- spec/admin_quotas_spec.lua: admin:alter_client_quotas and
-- admin:describe_client_quotas against a real broker, on entities named
-- for this run only (defaults would throttle the other specs).
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
end)
