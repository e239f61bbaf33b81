-- spec/tls_spec.lua: security.protocol=SSL from Lua against the test
-- broker's secured listeners (KAFKA_BOOTSTRAP_SSL, KAFKA_BOOTSTRAP_MTLS,
-- the PKI in KN_TLS_DIR): produce and consume as a group member with a
-- commit over SSL and over mutual TLS with the same ssl.* keys as Java,
-- a certificate failure returned as nil, message, "_SSL", and the
-- secrets hidden by kafka.config(). Without the listeners the examples
-- are pending, or fail when KN_TEST_REQUIRE_SECURE=1 (CI).
local helper = require("spec.helper")
local kafka = require("kafka_native")

local ssl_bootstrap = os.getenv("KAFKA_BOOTSTRAP_SSL")
local mtls_bootstrap = os.getenv("KAFKA_BOOTSTRAP_MTLS")
local dir = os.getenv("KN_TLS_DIR")
local have = ssl_bootstrap and mtls_bootstrap and dir and ssl_bootstrap ~= "" and dir ~= ""
local required = os.getenv("KN_TEST_REQUIRE_SECURE") == "1"

local function read_file(name)
  local f = assert(io.open(dir .. "/" .. name, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- conf + extra, without touching either.
local function merged(conf, extra)
  local out = {}
  for k, v in pairs(conf) do out[k] = v end
  for k, v in pairs(extra or {}) do out[k] = v end
  return out
end

-- Produces n records and reads them back as a group member; commits.
local function roundtrip(conf)
  local admin = assert(kafka.admin(conf))
  local topic = helper.topic("tls")
  local res = assert(admin:create_topics({ { name = topic, partitions = 2 } }, { timeout_ms = 30000 }))
  assert.is_nil(res[topic].error, res[topic].message)
  assert(admin:wait_for_topics({ topic }, 30000))

  local producer = assert(kafka.producer(conf))
  for i = 1, 100 do assert(producer:send(topic, "v" .. i)) end
  assert(producer:flush(30000))
  assert(producer:close())

  local consumer = assert(kafka.consumer(merged(conf, {
    ["group.id"] = helper.topic("g-tls"),
    ["auto.offset.reset"] = "earliest",
    ["enable.auto.commit"] = false,
  })))
  assert(consumer:subscribe({ topic }))
  local seen, n = {}, 0
  local deadline = os.time() + 60
  while n < 100 and os.time() <= deadline do
    for _, r in ipairs(assert(consumer:poll(500))) do
      assert.is_nil(seen[r.value], "record returned twice: " .. r.value)
      seen[r.value] = true
      n = n + 1
    end
  end
  assert.are.equal(100, n)
  assert(consumer:commit({ sync = true }))
  assert(consumer:close())
  admin:delete_topics({ topic })
  admin:close()
end

describe("security.protocol=SSL", function()
  if not have then
    if required then
      it("needs the secured listeners", function()
        error("KAFKA_BOOTSTRAP_SSL / KAFKA_BOOTSTRAP_MTLS / KN_TLS_DIR are not set and KN_TEST_REQUIRE_SECURE=1")
      end)
    else
      pending("KAFKA_BOOTSTRAP_SSL, KAFKA_BOOTSTRAP_MTLS and KN_TLS_DIR are not set: start tools/kafka/broker")
    end
    return
  end

  it("produces and consumes over SSL with a PEM trust store", function()
    roundtrip({
      ["bootstrap.servers"] = ssl_bootstrap,
      ["security.protocol"] = "SSL",
      ["ssl.truststore.type"] = "PEM",
      ["ssl.truststore.location"] = dir .. "/ca.pem",
    })
  end)

  it("produces and consumes over mutual TLS with PKCS12 stores", function()
    local pass = os.getenv("KN_TLS_STORE_PASSWORD")
    roundtrip({
      ["bootstrap.servers"] = mtls_bootstrap,
      ["security.protocol"] = "SSL",
      ["ssl.truststore.type"] = "PKCS12",
      ["ssl.truststore.location"] = dir .. "/truststore.p12",
      ["ssl.truststore.password"] = pass,
      ["ssl.keystore.type"] = "PKCS12",
      ["ssl.keystore.location"] = dir .. "/client.p12",
      ["ssl.keystore.password"] = pass,
    })
  end)

  it("produces and consumes over mutual TLS with inline PEM and an encrypted key", function()
    roundtrip({
      ["bootstrap.servers"] = mtls_bootstrap,
      ["security.protocol"] = "SSL",
      ["ssl.truststore.type"] = "PEM",
      ["ssl.truststore.certificates"] = read_file("ca.pem"),
      ["ssl.keystore.type"] = "PEM",
      ["ssl.keystore.certificate.chain"] = read_file("client.pem"),
      ["ssl.keystore.key"] = read_file("client-enc.key"),
      ["ssl.key.password"] = os.getenv("KN_TLS_KEY_PASSWORD"),
    })
  end)

  it("returns a certificate failure as nil, message, _SSL", function()
    local admin = assert(kafka.admin({
      ["bootstrap.servers"] = ssl_bootstrap,
      ["security.protocol"] = "SSL",
      ["ssl.truststore.location"] = dir .. "/other-ca.pem",
    }))
    local t0 = os.time()
    local ok, msg, code = admin:list_topics({ timeout_ms = 30000 })
    assert.is_nil(ok)
    assert.are.equal("_SSL", code)
    assert.matches("certificate verify failed", msg, 1, true)
    assert.is_true(os.time() - t0 <= 3) -- seconds, not the 30 s budget
    admin:close()
  end)

  it("refuses a bad trust store when the client is created, naming the key", function()
    local none, msg, code = kafka.producer({
      ["bootstrap.servers"] = ssl_bootstrap,
      ["security.protocol"] = "SSL",
      ["ssl.truststore.location"] = dir .. "/truststore.jks",
    })
    assert.is_nil(none)
    assert.are.equal("_CONFIG", code)
    assert.matches("keytool", msg, 1, true)
    assert.matches("ssl.truststore", msg, 1, true)
  end)

  it("kafka.config() hides every secret", function()
    local secret = "do-not-show"
    local conf = assert(kafka.config("consumer", {
      ["bootstrap.servers"] = ssl_bootstrap,
      ["security.protocol"] = "SSL",
      ["ssl.key.password"] = secret,
      ["ssl.keystore.password"] = secret,
      ["ssl.truststore.password"] = secret,
      ["ssl.keystore.key"] = secret,
      ["ssl.keystore.certificate.chain"] = secret,
      ["ssl.truststore.certificates"] = secret,
    }))
    for _, k in ipairs({ "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password",
      "ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates" }) do
      assert.are.equal("[hidden]", conf[k].value, k)
    end
    assert.are.equal("SSL", conf["security.protocol"].value)
  end)
end)
