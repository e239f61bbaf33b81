-- spec/admin_scram_spec.lua: admin:alter_user_scram_credentials and
-- admin:describe_user_scram_credentials against a real broker (the
-- password is salted in C), and a SCRAM login over the SASL_PLAINTEXT
-- listener as a fresh user with credentials set this way.
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

  local sasl_bootstrap = os.getenv("KAFKA_BOOTSTRAP_SASL_PLAINTEXT")
  local function login_send(mechanism, user, password, topic)
    local producer = assert(kafka.producer({
      ["bootstrap.servers"] = sasl_bootstrap,
      ["security.protocol"] = "SASL_PLAINTEXT",
      ["sasl.mechanism"] = mechanism,
      ["sasl.jaas.config"] = string.format(
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";',
        user, password),
      ["max.block.ms"] = 10000,
    }))
    local ok, msg, code = producer:send(topic, "s", { partition = 0 })
    if ok then ok, msg, code = producer:flush(30000) end
    producer:close()
    return ok, msg, code
  end

  it("logs in over SASL with credentials it set", function()
    if not (sasl_bootstrap and sasl_bootstrap ~= "") then
      assert(os.getenv("KN_TEST_REQUIRE_SECURE") ~= "1", "KAFKA_BOOTSTRAP_SASL_PLAINTEXT not set")
      return
    end
    local user, topic = helper.topic("scram-login"), helper.topic("scram-login-topic")
    helper.create_topic(admin, topic)
    local res = assert(admin:alter_user_scram_credentials({
      { user = user, mechanism = "SCRAM-SHA-512", password = "pw-512", iterations = 4096 } }))
    assert.are.same({}, res[user])
    helper.wait_for(function() return { login_send("SCRAM-SHA-512", user, "pw-512", topic) } end,
      function(r) return r[1] ~= nil end)
    local ok, _, code = login_send("SCRAM-SHA-512", user, "wrong", topic)
    assert.is_nil(ok)
    assert.are.equal("_AUTHENTICATION", code)
    assert(admin:alter_user_scram_credentials({ { user = user, mechanism = "SCRAM-SHA-512", delete = true } }))
  end)
end)
