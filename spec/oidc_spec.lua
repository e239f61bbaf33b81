-- spec/oidc_spec.lua: SASL OAUTHBEARER with tokens from an OAuth/OIDC
-- token endpoint (KIP-768 client credentials) from Lua, over the
-- broker's OIDC listener, which checks the tokens' RS256 signatures
-- against the harness provider's JWKS (tools/kafka/oidc.sh; env
-- KAFKA_BOOTSTRAP_OIDC, KN_OIDC_TOKEN_URL, KN_OIDC_CLIENT_ID,
-- KN_OIDC_CLIENT_SECRET, KN_TLS_DIR): produce and consume as a group
-- member with the client fetching its own tokens; the same with an
-- oauthbearer_token function that fetches them (with the curl tool);
-- a wrong client secret and a malformed answer fail the constructor
-- with nil, message, code naming the cause and never the secret; the
-- secret is hidden in kafka.config(). Without the listener the spec
-- fails when KN_TEST_REQUIRE_SECURE=1 and is pending otherwise.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local bootstrap = os.getenv("KAFKA_BOOTSTRAP_OIDC")
local url = os.getenv("KN_OIDC_TOKEN_URL")
local id = os.getenv("KN_OIDC_CLIENT_ID")
local secret = os.getenv("KN_OIDC_CLIENT_SECRET")
local tls = os.getenv("KN_TLS_DIR")
local have = bootstrap and bootstrap ~= "" and url and url ~= "" and tls and tls ~= ""
local MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
local HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"

-- The OIDC listener's keys; the token endpoint configured as in Java.
local function oidc(extra, token_url, client_secret)
  local t = {
    ["bootstrap.servers"] = bootstrap,
    ["security.protocol"] = "SASL_SSL",
    ["ssl.truststore.type"] = "PEM",
    ["ssl.truststore.location"] = (tls or "") .. "/ca.pem",
    ["sasl.mechanism"] = "OAUTHBEARER",
    ["sasl.login.callback.handler.class"] = HANDLER,
    ["sasl.oauthbearer.token.endpoint.url"] = token_url or url,
    ["sasl.jaas.config"] = string.format('%s required clientId="%s" clientSecret="%s" '
      .. 'ssl.truststore.location="%s/ca.pem";', MODULE, id, client_secret or secret, tls),
  }
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

-- What an application's token function might do: ask the endpoint
-- itself (here with the curl tool) and hand over token and expiry.
local function fetch_token()
  -- env -u LD_PRELOAD: under the sanitizer build's preloaded ASan the
  -- (uninstrumented) curl tool hangs.
  local cmd = string.format("env -u LD_PRELOAD curl -s --max-time 10 --cacert %s/ca.pem -u %s:%s "
    .. "-d grant_type=client_credentials %s",
    tls, id, secret, url)
  local f = assert(io.popen(cmd))
  local body = f:read("*a")
  f:close()
  local tok = body:match('"access_token"%s*:%s*"([^"]+)"')
  local life = tonumber(body:match('"expires_in"%s*:%s*(%d+)'))
  assert(tok and life, "no token from the endpoint")
  return tok, (os.time() + life) * 1000, id
end

describe("SASL OAUTHBEARER with an OIDC token endpoint", function()
  if not helper.need_secure(have, "KAFKA_BOOTSTRAP_OIDC / KN_OIDC_TOKEN_URL / KN_TLS_DIR", "KAFKA_BOOTSTRAP_OIDC") then
    return
  end

  local admin
  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)
  teardown(function() admin:close() end)

  it("produces and consumes as a group member with tokens from the endpoint", function()
    local topic = helper.topic("oidc")
    helper.create_topic(admin, topic)
    helper.produce_values(oidc(), nil, topic, 100)
    local consumer = assert(kafka.consumer(oidc({
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

  it("takes the endpoint's tokens from an oauthbearer_token function too", function()
    local calls = 0
    local function token()
      calls = calls + 1
      return fetch_token()
    end
    local cb = {
      ["bootstrap.servers"] = bootstrap,
      ["security.protocol"] = "SASL_SSL",
      ["ssl.truststore.type"] = "PEM",
      ["ssl.truststore.location"] = tls .. "/ca.pem",
      ["sasl.mechanism"] = "OAUTHBEARER",
    }
    local a = assert(kafka.admin(cb, { oauthbearer_token = token }))
    assert(a:list_topics({ timeout_ms = 30000 }))
    a:close()
    local topic = helper.topic("oidc-cb")
    helper.create_topic(admin, topic)
    helper.produce_values(cb, { oauthbearer_token = token }, topic, 50)
    local cc = {}
    for k, v in pairs(cb) do cc[k] = v end
    cc["group.id"] = topic .. "-group"
    cc["auto.offset.reset"] = "earliest"
    local consumer = assert(kafka.consumer(cc, { oauthbearer_token = token }))
    assert(consumer:subscribe({ topic }))
    local got = helper.poll_values(consumer, 50)
    assert.are.equal(50, #got)
    for i = 1, 50 do assert.are.equal("v" .. i, got[i]) end
    consumer:close()
    assert.is_true(calls >= 3)
  end)

  it("fails the constructor on a wrong secret with the endpoint's status, never the secret", function()
    local p, msg, code = kafka.producer(oidc(nil, nil, "not-the-secret"))
    assert.is_nil(p)
    assert.are.equal("_AUTHENTICATION", code) -- the token endpoint's failure keeps its code (kn_last_error)
    assert.truthy(msg:find("HTTP 401", 1, true), msg)
    assert.truthy(msg:find("invalid_client", 1, true), msg)
    assert.falsy(msg:find("not-the-secret", 1, true))
  end)

  it("fails the constructor on a malformed answer or token, naming it", function()
    for _, case in ipairs({
      { "mode=json", "malformed JSON at byte" },
      { "mode=jwt", "malformed JWT: expected three sections" },
    }) do
      local p, msg, code = kafka.producer(oidc(nil, url .. "?" .. case[1]))
      assert.is_nil(p)
      assert.are.equal("_AUTHENTICATION", code) -- the token endpoint's failure keeps its code (kn_last_error)
      assert.truthy(msg:find(case[2], 1, true), msg)
    end
  end)

  it("fails within its bound when the endpoint is down", function()
    local t0 = os.time()
    local p, msg, code = kafka.producer(oidc({ ["sasl.login.retry.backoff.max.ms"] = 500 },
      "https://127.0.0.1:1/token"))
    assert.is_nil(p)
    assert.are.equal("_AUTHENTICATION", code) -- the token endpoint's failure keeps its code (kn_last_error)
    assert.truthy(msg:find("Connection refused", 1, true), msg)
    assert.is_true(os.time() - t0 <= 5)
  end)

  it("hides the client secret in kafka.config()", function()
    local producer = assert(kafka.producer(oidc({ ["sasl.oauthbearer.client.credentials.client.secret"] = secret })))
    local dump = assert(kafka.config("producer",
      oidc({ ["sasl.oauthbearer.client.credentials.client.secret"] = secret })))
    assert.are.equal("[hidden]", dump["sasl.oauthbearer.client.credentials.client.secret"].value)
    assert.are.equal("[hidden]", dump["sasl.jaas.config"].value)
    for k, v in pairs(dump) do
      assert.falsy(tostring(v.value or ""):find(secret, 1, true), k)
    end
    producer:close()
  end)
end)
