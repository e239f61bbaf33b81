-- spec/sasl_spec.lua: SASL from Lua over the broker's SASL_PLAINTEXT and
-- SASL_SSL listeners (tools/kafka/broker env: KAFKA_BOOTSTRAP_SASL_PLAINTEXT,
-- KAFKA_BOOTSTRAP_SASL_SSL, KN_TLS_DIR, KN_SASL_USER, KN_SASL_PASSWORD):
-- produce and consume as a group member with each mechanism (and SCRAM
-- over TLS), the keys given in a Lua table; a wrong
-- password fails fast as nil, message, "_AUTHENTICATION"; the JAAS
-- config never shows in kafka.config(). Without the listener the spec
-- fails when KN_TEST_REQUIRE_SECURE=1 and is pending otherwise.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local bootstrap = os.getenv("KAFKA_BOOTSTRAP_SASL_PLAINTEXT")
local user, password = os.getenv("KN_SASL_USER"), os.getenv("KN_SASL_PASSWORD")
local have = bootstrap and bootstrap ~= "" and user and password

local function jaas(mechanism, u, p)
  local module = mechanism == "PLAIN" and "org.apache.kafka.common.security.plain.PlainLoginModule"
    or "org.apache.kafka.common.security.scram.ScramLoginModule"
  return string.format('%s required username="%s" password="%s";', module, u, p)
end

local ssl_bootstrap, tls_dir = os.getenv("KAFKA_BOOTSTRAP_SASL_SSL"), os.getenv("KN_TLS_DIR")

local function sasl(mechanism, u, p, extra, over_tls)
  local t = {
    ["bootstrap.servers"] = over_tls and ssl_bootstrap or bootstrap,
    ["security.protocol"] = over_tls and "SASL_SSL" or "SASL_PLAINTEXT",
    ["sasl.mechanism"] = mechanism,
    ["sasl.jaas.config"] = jaas(mechanism, u, p),
  }
  if over_tls then
    t["ssl.truststore.type"] = "PEM"
    t["ssl.truststore.location"] = tls_dir .. "/ca.pem"
  end
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

describe("SASL", function()
  if not helper.need_secure(have, "KAFKA_BOOTSTRAP_SASL_PLAINTEXT / KN_SASL_USER / KN_SASL_PASSWORD",
    "KAFKA_BOOTSTRAP_SASL_PLAINTEXT") then
    return
  end

  local admin
  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)
  teardown(function() admin:close() end)

  local cases = {
    { "PLAIN", false }, { "SCRAM-SHA-256", false }, { "SCRAM-SHA-512", false },
    { "SCRAM-SHA-256", true }, { "SCRAM-SHA-512", true },
  }
  for _, case in ipairs(cases) do
    local mechanism, over_tls = case[1], case[2]
    it("produces and consumes as a group member with " .. mechanism .. (over_tls and " over SASL_SSL" or ""), function()
      assert(not over_tls or (ssl_bootstrap and tls_dir), "KAFKA_BOOTSTRAP_SASL_SSL / KN_TLS_DIR not set")
      local topic = helper.topic("sasl")
      helper.create_topic(admin, topic)
      helper.produce_values(sasl(mechanism, user, password, nil, over_tls), nil, topic, 100)

      local consumer = assert(kafka.consumer(sasl(mechanism, user, password, {
        ["group.id"] = topic .. "-group", ["auto.offset.reset"] = "earliest",
        ["enable.auto.commit"] = false,
      }, over_tls)))
      assert(consumer:subscribe({ topic }))
      local got = helper.poll_values(consumer, 100)
      assert.are.equal(100, #got)
      for i = 1, 100 do assert.are.equal("v" .. i, got[i]) end
      assert(consumer:commit({ sync = true }))
      assert.are.equal(100, consumer:committed({ { topic = topic, partition = 0 } })[1].offset)
      local m = consumer:metrics()
      assert.are.equal(0, m.connect_failures)
      consumer:close()
    end)
  end

  it("fails fast with the broker's reason on a wrong password, without reconnecting", function()
    local producer = assert(kafka.producer(sasl("SCRAM-SHA-256", user, "not-the-password")))
    local t0 = os.time()
    local ok, msg, code = producer:send("kn-spec-sasl-denied", "x")
    assert.is_nil(ok)
    assert.are.equal("_AUTHENTICATION", code)
    assert.truthy(msg:find("invalid credentials", 1, true), msg)
    assert.is_true(os.time() - t0 <= 2)
    -- the same from flush and poll, at once
    ok, msg, code = producer:flush(5000)
    assert.is_nil(ok)
    assert.are.equal("_AUTHENTICATION", code)
    assert.truthy(msg:find("invalid credentials", 1, true), msg)
    ok, msg, code = producer:poll(0)
    assert.is_nil(ok)
    assert.are.equal("_AUTHENTICATION", code)
    local before = producer:metrics().connects
    os.execute("sleep 1.5")
    assert.are.equal(1, before)
    assert.are.equal(before, producer:metrics().connects)
    producer:close(1000)

    local consumer = assert(kafka.consumer(sasl("PLAIN", user, "not-the-password",
      { ["group.id"] = "kn-spec-sasl-denied" })))
    assert(consumer:subscribe({ "kn-spec-sasl-denied" }))
    local recs
    recs, msg, code = consumer:poll(3000)
    assert.is_nil(recs)
    assert.are.equal("_AUTHENTICATION", code)
    assert.truthy(msg:find("Invalid username or password", 1, true), msg)
    consumer:close()
  end)

  it("refuses a login module that does not match the mechanism, naming both", function()
    local conf = sasl("PLAIN", user, password)
    conf["sasl.mechanism"] = "SCRAM-SHA-512"
    local p, msg, code = kafka.producer(conf)
    assert.is_nil(p)
    assert.are.equal("_CONFIG", code)
    assert.truthy(msg:find("PlainLoginModule", 1, true), msg)
    assert.truthy(msg:find("SCRAM-SHA-512", 1, true), msg)
    assert.falsy(msg:find(password, 1, true))
  end)

  it("hides sasl.jaas.config in kafka.config()", function()
    local conf = assert(kafka.config("consumer", sasl("PLAIN", user, password)))
    assert.are.equal("[hidden]", conf["sasl.jaas.config"].value)
    assert.are.equal("SASL_PLAINTEXT", conf["security.protocol"].value)
    for _, entry in pairs(conf) do
      assert.falsy(entry.value and entry.value:find(password, 1, true))
    end
  end)
end)
