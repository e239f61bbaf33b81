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

-- base64url without padding, arithmetic only (Lua 5.1 has no bit ops)
local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
local function b64url(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local chars = 2 + (b and 1 or 0) + (c and 1 or 0)
    for k = 1, chars do
      local idx = math.floor(n / 2 ^ (18 - 6 * (k - 1))) % 64
      out[#out + 1] = B64:sub(idx + 1, idx + 1)
    end
  end
  return table.concat(out)
end

-- An unsigned token for sub, valid for lifetime_s, as the broker's
-- default validator accepts it; returns token, expiry ms.
local function unsecured_token(sub, lifetime_s)
  local now = os.time()
  local exp = now + lifetime_s
  local claims = string.format('{"exp":%d,"iat":%d,"sub":"%s"}', exp, now, sub)
  return b64url('{"alg":"none"}') .. "." .. b64url(claims) .. ".", exp * 1000
end

-- The SASL_SSL OAUTHBEARER keys with extra's on top; no
-- sasl.jaas.config: the oauthbearer_token function is the token source.
local function ob_cb(extra)
  local t = {
    ["bootstrap.servers"] = bootstrap,
    ["security.protocol"] = "SASL_SSL",
    ["ssl.truststore.type"] = "PEM",
    ["ssl.truststore.location"] = (tls or "") .. "/ca.pem",
    ["sasl.mechanism"] = "OAUTHBEARER",
  }
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

-- The same with the unsecured login's JAAS options.
local function ob(options, extra)
  local t = ob_cb(extra)
  t["sasl.jaas.config"] = MODULE .. " required " .. options .. ";"
  return t
end

describe("SASL OAUTHBEARER", function()
  if not helper.need_secure(have, "KAFKA_BOOTSTRAP_SASL_SSL / KN_TLS_DIR", "KAFKA_BOOTSTRAP_SASL_SSL") then
    return
  end

  local admin
  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)
  teardown(function() admin:close() end)

  it("produces and consumes as a group member with an unsecured token", function()
    local topic = helper.topic("oauthbearer")
    helper.create_topic(admin, topic)
    local opts = 'unsecuredLoginStringClaim_sub="alice" unsecuredLoginExtension_traceId="spec"'
    helper.produce_values(ob(opts), nil, topic, 100)

    local consumer = assert(kafka.consumer(ob(opts, {
      ["group.id"] = topic .. "-group", ["auto.offset.reset"] = "earliest",
      ["enable.auto.commit"] = false,
    })))
    assert(consumer:subscribe({ topic }))
    local got = helper.poll_values(consumer, 100)
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

  it("takes tokens from an oauthbearer_token function (producer, consumer, admin)", function()
    local calls = 0
    local function token()
      calls = calls + 1
      local tok, exp = unsecured_token("alice", 3600)
      return tok, exp, "alice", { traceId = "spec" }
    end
    local a = assert(kafka.admin(ob_cb(), { oauthbearer_token = token }))
    assert(a:list_topics({ timeout_ms = 30000 }))
    a:close()
    assert.is_true(calls >= 1)
    local topic = helper.topic("oauthcb")
    helper.create_topic(admin, topic)
    helper.produce_values(ob_cb(), { oauthbearer_token = token }, topic, 50)
    local consumer = assert(kafka.consumer(ob_cb({ ["group.id"] = topic .. "-group",
      ["auto.offset.reset"] = "earliest" }), { oauthbearer_token = token }))
    assert(consumer:subscribe({ topic }))
    local got = helper.poll_values(consumer, 50)
    assert.are.equal(50, #got)
    consumer:close()
    assert.is_true(calls >= 3)
  end)

  it("refreshes 15 s tokens through KIP-368 re-authentications over REAUTH, nothing lost", function()
    local reauth = os.getenv("KAFKA_BOOTSTRAP_REAUTH")
    assert.truthy(reauth, "KAFKA_BOOTSTRAP_REAUTH not set")
    local topic = helper.topic("oauthcb-reauth")
    helper.create_topic(admin, topic)
    local pcalls, ccalls = 0, 0
    local producer = assert(kafka.producer(ob_cb({ ["bootstrap.servers"] = reauth,
      ["enable.idempotence"] = true, ["linger.ms"] = 5 }), {
      oauthbearer_token = function() pcalls = pcalls + 1; return unsecured_token("alice", 15) end,
    }))
    local consumer = assert(kafka.consumer(ob_cb({ ["bootstrap.servers"] = reauth,
      ["group.id"] = topic .. "-group", ["auto.offset.reset"] = "earliest" }), {
      oauthbearer_token = function() ccalls = ccalls + 1; return unsecured_token("alice", 15) end,
    }))
    assert(consumer:subscribe({ topic }))
    local sent, got = 0, 0
    local t0 = os.time()
    while os.time() - t0 < 32 do
      for _ = 1, 10 do
        assert(producer:send(topic, "v" .. sent, { partition = 0 }))
        sent = sent + 1
      end
      assert(producer:poll(0))
      for _, r in ipairs(assert(consumer:poll(50))) do
        assert.are.equal("v" .. got, r.value) -- in order, none lost or doubled
        got = got + 1
      end
    end
    assert(producer:flush(30000))
    local deadline = os.time() + 30
    while got < sent and os.time() < deadline do
      for _, r in ipairs(assert(consumer:poll(200))) do
        assert.are.equal("v" .. got, r.value)
        got = got + 1
      end
    end
    assert.are.equal(sent, got)
    local pm, cm = producer:metrics(), consumer:metrics()
    assert.is_true(pcalls >= 2, "producer token calls " .. pcalls)
    assert.is_true(ccalls >= 2, "consumer token calls " .. ccalls)
    assert.is_true(pm.reauthentications >= 2, "producer re-authentications " .. pm.reauthentications)
    assert.is_true(cm.reauthentications >= 2, "consumer re-authentications " .. cm.reauthentications)
    assert.are.equal(0, pm.connect_failures)
    assert.are.equal(0, cm.connect_failures)
    producer:close()
    consumer:close()
  end)

  it("turns a raising or garbage oauthbearer_token into _AUTHENTICATION naming it", function()
    local cases = {
      { function() error("idp down") end, "oauthbearer_token raised" },
      { function() return 42 end, "not a token string" },
      { function() return "a.b.", "soon" end, "lifetime_ms" },
      { function() return "a.b.", os.time() * 1000 + 60000, nil, { [1] = "x" } end, "extension" },
    }
    for _, case in ipairs(cases) do
      local producer = assert(kafka.producer(ob_cb(), { oauthbearer_token = case[1] }))
      local ok, msg, code = producer:send("kn-spec-oauthcb-denied", "x")
      assert.is_nil(ok)
      assert.are.equal("_AUTHENTICATION", code)
      assert.truthy(msg:find(case[2], 1, true), msg)
      producer:close(1000)
    end
    assert.has_error(function() kafka.producer(ob_cb(), { oauthbearer_token = "nope" }) end)
  end)

  it("hides sasl.jaas.config in kafka.config()", function()
    local conf = assert(kafka.config("producer", ob('unsecuredLoginStringClaim_sub="alice"')))
    assert.are.equal("[hidden]", conf["sasl.jaas.config"].value)
  end)
end)
