-- spec/oauthbearer_spec.lua: SASL OAUTHBEARER from Lua with the
-- unsecured JWS login (OAuthBearerLoginModule's unsecuredLogin* options)
-- over the broker's SASL_SSL listener (tools/kafka/broker env:
-- KAFKA_BOOTSTRAP_SASL_SSL, KN_TLS_DIR): produce and consume as a group
-- member; an expired token fails fast as nil, message,
-- "_AUTHENTICATION" with the broker's invalid_token status; the JAAS
-- config never shows in kafka.config(). Without the listener the spec
-- fails when KN_TEST_REQUIRE_SECURE=1 and is pending otherwise.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local bootstrap = os.getenv("KAFKA_BOOTSTRAP_SASL_SSL")
local tls = os.getenv("KN_TLS_DIR")
local have = bootstrap and bootstrap ~= "" and tls and tls ~= ""
local MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"

local function ob(options, extra)
  local t = {
    ["bootstrap.servers"] = bootstrap,
    ["security.protocol"] = "SASL_SSL",
    ["ssl.truststore.type"] = "PEM",
    ["ssl.truststore.location"] = (tls or "") .. "/ca.pem",
    ["sasl.mechanism"] = "OAUTHBEARER",
    ["sasl.jaas.config"] = MODULE .. " required " .. options .. ";",
  }
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

describe("SASL OAUTHBEARER", function()
  if not have then
    if os.getenv("KN_TEST_REQUIRE_SECURE") == "1" then
      it("needs the secured listeners", function()
        error("KAFKA_BOOTSTRAP_SASL_SSL / KN_TLS_DIR not set (tools/kafka/broker env)")
      end)
    else
      pending("KAFKA_BOOTSTRAP_SASL_SSL not set (tools/kafka/broker env)")
    end
    return
  end

  local admin
  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)
  teardown(function() admin:close() end)

  it("produces and consumes as a group member with an unsecured token", function()
    local topic = helper.topic("oauthbearer")
    local res = assert(admin:create_topics({ { name = topic, partitions = 1 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
    local opts = 'unsecuredLoginStringClaim_sub="alice" unsecuredLoginExtension_traceId="spec"'
    local reports = {}
    local producer = assert(kafka.producer(ob(opts),
      { on_delivery = function(r) reports[#reports + 1] = r end }))
    for i = 1, 100 do assert(producer:send(topic, "v" .. i, { partition = 0 })) end
    assert(producer:flush(30000))
    assert.are.equal(100, #reports)
    for _, r in ipairs(reports) do assert.is_nil(r.error, r.message) end
    producer:close()

    local consumer = assert(kafka.consumer(ob(opts, {
      ["group.id"] = topic .. "-group", ["auto.offset.reset"] = "earliest",
      ["enable.auto.commit"] = false,
    })))
    assert(consumer:subscribe({ topic }))
    local got = {}
    local deadline = os.time() + 60
    while #got < 100 and os.time() < deadline do
      for _, r in ipairs(assert(consumer:poll(500))) do got[#got + 1] = r.value end
    end
    assert.are.equal(100, #got)
    for i = 1, 100 do assert.are.equal("v" .. i, got[i]) end
    assert(consumer:commit({ sync = true }))
    assert.are.equal(0, consumer:metrics().connect_failures)
    consumer:close()
  end)

  it("fails fast with the broker's status on an expired token", function()
    local producer = assert(kafka.producer(ob('unsecuredLoginStringClaim_sub="alice" '
      .. 'unsecuredLoginLifetimeSeconds="-60"')))
    local t0 = os.time()
    local ok, msg, code = producer:send("kn-spec-oauthbearer-denied", "x")
    assert.is_nil(ok)
    assert.are.equal("_AUTHENTICATION", code)
    assert.truthy(msg:find("invalid_token", 1, true), msg)
    assert.truthy(msg:find("OAUTHBEARER", 1, true), msg)
    assert.falsy(msg:find("eyJ", 1, true)) -- the token itself is never shown
    assert.is_true(os.time() - t0 <= 2)
    ok, msg, code = producer:flush(5000)
    assert.is_nil(ok)
    assert.are.equal("_AUTHENTICATION", code)
    producer:close(1000)
  end)

  it("refuses a config without the principal claim, naming the option", function()
    local p, msg, code = kafka.producer(ob('unsecuredLoginStringClaim_name="alice"'))
    assert.is_nil(p)
    assert.are.equal("_CONFIG", code)
    assert.truthy(msg:find("unsecuredLoginStringClaim_sub", 1, true), msg)
  end)

  it("hides sasl.jaas.config in kafka.config()", function()
    local conf = assert(kafka.config("producer", ob('unsecuredLoginStringClaim_sub="alice"')))
    assert.are.equal("[hidden]", conf["sasl.jaas.config"].value)
  end)
end)
