-- spec/gssapi_spec.lua: SASL GSSAPI (Kerberos) from Lua over the broker's
-- GSSAPI listeners and the harness KDC (tools/kafka/broker env:
-- KAFKA_BOOTSTRAP_GSSAPI, KAFKA_BOOTSTRAP_GSSAPI_SSL, KRB5_CONFIG,
-- KN_KRB5_DIR, KN_KRB5_KEYTAB, KN_KRB5_PRINCIPAL, KN_TLS_DIR): produce and
-- consume as a group member with a keytab over SASL_PLAINTEXT and
-- SASL_SSL; a wrong keytab and a wrong service name fail fast as
-- nil, message, "_AUTHENTICATION" naming the Kerberos reason; a missing
-- service name is a configuration error naming the key. Without the
-- listeners the spec fails when KN_TEST_REQUIRE_SECURE=1 and is pending
-- otherwise.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local bootstrap = os.getenv("KAFKA_BOOTSTRAP_GSSAPI")
local ssl_bootstrap = os.getenv("KAFKA_BOOTSTRAP_GSSAPI_SSL")
local krb_dir, keytab = os.getenv("KN_KRB5_DIR"), os.getenv("KN_KRB5_KEYTAB")
local principal, tls_dir = os.getenv("KN_KRB5_PRINCIPAL"), os.getenv("KN_TLS_DIR")
local have = bootstrap and bootstrap ~= "" and ssl_bootstrap and krb_dir and keytab and principal and tls_dir

local function gssapi(extra, over_tls, kt)
  local t = {
    ["bootstrap.servers"] = over_tls and ssl_bootstrap or bootstrap,
    ["security.protocol"] = over_tls and "SASL_SSL" or "SASL_PLAINTEXT",
    ["sasl.mechanism"] = "GSSAPI",
    ["sasl.kerberos.service.name"] = "kafka",
    ["sasl.jaas.config"] = string.format(
      'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="%s" principal="%s";',
      kt or keytab, principal),
  }
  if over_tls then
    t["ssl.truststore.type"] = "PEM"
    t["ssl.truststore.location"] = tls_dir .. "/ca.pem"
  end
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

describe("SASL GSSAPI", function()
  if not helper.need_secure(have, "KAFKA_BOOTSTRAP_GSSAPI / KN_KRB5_KEYTAB / KN_KRB5_PRINCIPAL",
    "KAFKA_BOOTSTRAP_GSSAPI") then
    return
  end

  local admin
  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)
  teardown(function() admin:close() end)

  for _, over_tls in ipairs({ false, true }) do
    it("produces and consumes as a group member with a keytab over " .. (over_tls and "SASL_SSL" or "SASL_PLAINTEXT"),
      function()
        local topic = helper.topic("gssapi")
        helper.create_topic(admin, topic)
        helper.produce_values(gssapi(nil, over_tls), nil, topic, 100)
        local consumer = assert(kafka.consumer(gssapi({
          ["group.id"] = topic .. "-group", ["auto.offset.reset"] = "earliest",
          ["enable.auto.commit"] = false,
        }, over_tls)))
        assert(consumer:subscribe({ topic }))
        local got = helper.poll_values(consumer, 100)
        assert.are.equal(100, #got)
        for i = 1, 100 do assert.are.equal("v" .. i, got[i]) end
        assert(consumer:commit({ sync = true }))
        assert.are.equal(100, consumer:committed({ { topic = topic, partition = 0 } })[1].offset)
        assert.are.equal(0, consumer:metrics().connect_failures)
        consumer:close()
      end)
  end

  local function denied(conf, reason)
    local producer = assert(kafka.producer(conf))
    local t0 = os.time()
    local ok, msg, code = producer:send("kn-spec-gssapi-denied", "x")
    assert.is_nil(ok)
    assert.are.equal("_AUTHENTICATION", code)
    assert.truthy(msg:find(reason, 1, true), msg)
    assert.truthy(msg:find("GSSAPI", 1, true), msg)
    assert.is_true(os.time() - t0 <= 2)
    ok, msg, code = producer:flush(1000)
    assert.is_nil(ok)
    assert.are.equal("_AUTHENTICATION", code)
    assert.are.equal(1, producer:metrics().connects)
    producer:close(1000)
  end

  it("fails fast naming the Kerberos reason with a wrong keytab", function()
    denied(gssapi(nil, false, krb_dir .. "/wrong.keytab"), "Preauthentication failed")
  end)

  it("fails fast naming the Kerberos reason with a missing keytab", function()
    denied(gssapi(nil, false, krb_dir .. "/no-such.keytab"), "not found")
  end)

  it("fails fast naming the Kerberos reason with a wrong service name", function()
    denied(gssapi({ ["sasl.kerberos.service.name"] = "nokafka" }), "not found in Kerberos database")
  end)

  it("requires sasl.kerberos.service.name, as Java does", function()
    local conf = gssapi()
    conf["sasl.kerberos.service.name"] = nil
    local p, msg, code = kafka.producer(conf)
    assert.is_nil(p)
    assert.are.equal("_CONFIG", code)
    assert.truthy(msg:find("sasl.kerberos.service.name", 1, true), msg)
  end)
end)
