-- spec/admin_tokens_spec.lua: delegation tokens from Lua over the
-- broker's SASL_PLAINTEXT listener (the admin logged in as the harness
-- SASL user with SCRAM-SHA-256): refused without authentication, created,
-- described, used for a SCRAM login with tokenauth=true, renewed and
-- expired.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local sasl_bootstrap = os.getenv("KAFKA_BOOTSTRAP_SASL_PLAINTEXT")
local user, password = os.getenv("KN_SASL_USER"), os.getenv("KN_SASL_PASSWORD")
local have = sasl_bootstrap and sasl_bootstrap ~= "" and user and password

local function scram(u, p, token)
  return {
    ["bootstrap.servers"] = sasl_bootstrap,
    ["security.protocol"] = "SASL_PLAINTEXT",
    ["sasl.mechanism"] = "SCRAM-SHA-256",
    ["sasl.jaas.config"] = string.format(
      'org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s"%s;',
      u, p, token and ' tokenauth="true"' or ""),
  }
end

-- One record with a token login: true or nil, message, code.
local function token_send(topic, token)
  local conf = scram(token.token_id, token.hmac_base64, true)
  conf["max.block.ms"] = 10000
  local producer = assert(kafka.producer(conf))
  local ok, msg, code = producer:send(topic, "t", { partition = 0 })
  if ok then ok, msg, code = producer:flush(30000) end
  producer:close()
  return ok, msg, code
end

describe("kafka_native.admin delegation tokens", function()
  if not helper.need_secure(have, "KAFKA_BOOTSTRAP_SASL_PLAINTEXT / KN_SASL_USER / KN_SASL_PASSWORD",
    "KAFKA_BOOTSTRAP_SASL_PLAINTEXT") then
    return
  end

  it("creates, describes, logs in with, renews and expires a token", function()
    local plain = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
    local topic = helper.topic("token")
    helper.create_topic(plain, topic)
    local ok, _, code = plain:create_delegation_token()
    assert.is_nil(ok)
    assert.are.equal("DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", code)
    plain:close()

    local admin = assert(kafka.admin(scram(user, password)))
    local renewer = "User:" .. helper.topic("renewer")
    local token = assert(admin:create_delegation_token({ renewers = { renewer }, max_lifetime_ms = 3600000 }))
    assert.are.equal("User:" .. user, token.owner)
    assert.are.same({ renewer }, token.renewers)
    assert.is_true(token.expiry_ms > token.issue_ms)

    local function find(list)
      for _, t in ipairs(list) do if t.token_id == token.token_id then return t end end
    end
    local got = helper.wait_for(function() return find(assert(admin:describe_delegation_tokens({ token.owner }))) end,
      function(t) return t ~= nil end)
    assert.are.equal(token.hmac, got.hmac)
    assert.are.same({ renewer }, got.renewers)

    helper.wait_for(function() return { token_send(topic, token) } end, function(r) return r[1] ~= nil end)
    assert.is_true(assert(admin:renew_delegation_token(token.hmac, 600000)) > token.issue_ms)
    assert(admin:expire_delegation_token(token.hmac, -1))
    helper.wait_for(function() return find(assert(admin:describe_delegation_tokens({ token.owner }))) end,
      function(t) return t == nil end)
    helper.wait_for(function() return { token_send(topic, token) } end,
      function(r) return r[3] == "_AUTHENTICATION" end)
    assert.has_error(function() admin:create_delegation_token({ owner = "nocolon" }) end)
    admin:close()
  end)
end)
