-- spec/admin_scram_spec.lua: admin:alter_user_scram_credentials and
-- admin:describe_user_scram_credentials against a real broker (the
-- password is salted in C; a SASL login is not part of this spec: the
-- test broker has no SASL listener).
local helper = require("spec.helper")
local kafka = require("kafka_native")

describe("kafka_native.admin SCRAM credentials", function()
  local admin

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)

  teardown(function()
    admin:close()
  end)

  local function wait_user(user, check)
    return helper.wait_for(function()
      return assert(admin:describe_user_scram_credentials({ user }))[user]
    end, check)
  end

  it("upserts, describes and deletes credentials per user", function()
    local alice, bob, carol = helper.topic("alice"), helper.topic("bob"), helper.topic("carol")
    local res = assert(admin:alter_user_scram_credentials({
      { user = alice, mechanism = "SCRAM-SHA-256", password = "secret", iterations = 4096 },
      { user = bob, mechanism = "SCRAM-SHA-256", password = "weak", iterations = 100 },
      { user = carol, mechanism = "SCRAM-SHA-512", delete = true },
    }))
    assert.are.same({}, res[alice])
    assert.are.equal("UNACCEPTABLE_CREDENTIAL", res[bob].error)
    assert.are.equal("RESOURCE_NOT_FOUND", res[carol].error)
    local got = wait_user(alice, function(u) return u.credentials ~= nil end)
    assert.are.same({ { mechanism = "SCRAM-SHA-256", iterations = 4096 } }, got.credentials)
    assert.are.equal("RESOURCE_NOT_FOUND", assert(admin:describe_user_scram_credentials({ bob }))[bob].error)
    assert.is_not_nil(assert(admin:describe_user_scram_credentials())[alice])

    res = assert(admin:alter_user_scram_credentials({ { user = alice, mechanism = "SCRAM-SHA-256", delete = true } }))
    assert.are.same({}, res[alice])
    wait_user(alice, function(u) return u.error == "RESOURCE_NOT_FOUND" end)
    assert.has_error(function()
      admin:alter_user_scram_credentials({ { user = alice, mechanism = "SCRAM-MD5", password = "x" } })
    end)
    assert.has_error(function() admin:alter_user_scram_credentials({ { user = alice, mechanism = "SCRAM-SHA-256" } }) end)
  end)
end)
