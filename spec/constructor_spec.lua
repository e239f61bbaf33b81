-- spec/constructor_spec.lua: a client that cannot be built says why with
-- the library's own error code (kn_last_error), not a blanket _CONFIG:
-- _SSL for a trust store that cannot be loaded, _CONFIG for a wrong key
-- or value, _UNSUPPORTED for a setting this build does not serve. No
-- broker is contacted: construction fails before any connection.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local dead = "127.0.0.1:1"

local function garbage_file()
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write("this is not a certificate\n")
  f:close()
  return path
end

local kinds = {
  producer = function(extra) return kafka.producer(extra) end,
  consumer = function(extra)
    extra["group.id"] = "kn-spec-ctor"
    return kafka.consumer(extra)
  end,
  admin = function(extra) return kafka.admin(extra) end,
}

describe("client constructors", function()
  assert(helper.cpath)
  for kind, new in pairs(kinds) do
    it(kind .. " returns _SSL for a trust store that does not exist", function()
      local c, msg, code = new({
        ["bootstrap.servers"] = dead,
        ["security.protocol"] = "SSL",
        ["ssl.truststore.location"] = "/nonexistent/kn-ca.pem",
      })
      assert.is_nil(c)
      assert.are.equal("_SSL", code)
      assert.matches("ssl.truststore.location", msg, 1, true)
      assert.matches("No such file", msg, 1, true)
    end)

    it(kind .. " returns _SSL for a trust store that is not one", function()
      local path = garbage_file()
      local c, msg, code = new({
        ["bootstrap.servers"] = dead,
        ["security.protocol"] = "SSL",
        ["ssl.truststore.location"] = path,
        ["ssl.truststore.type"] = "PEM",
      })
      os.remove(path)
      assert.is_nil(c)
      assert.are.equal("_SSL", code, msg)
      assert.matches("no PEM certificate", msg, 1, true)
    end)

    it(kind .. " returns _CONFIG for an unknown key, naming it", function()
      local c, msg, code = new({ ["bootstrap.servers"] = dead, ["bootstrap.server"] = dead })
      assert.is_nil(c)
      assert.are.equal("_CONFIG", code)
      assert.matches("bootstrap.server", msg, 1, true)
    end)

    it(kind .. " returns _CONFIG for a store type it refuses", function()
      local path = garbage_file()
      local c, msg, code = new({
        ["bootstrap.servers"] = dead,
        ["security.protocol"] = "SSL",
        ["ssl.truststore.location"] = path,
        ["ssl.truststore.type"] = "JCEKS",
      })
      os.remove(path)
      assert.is_nil(c)
      assert.are.equal("_CONFIG", code, msg)
      assert.matches("ssl.truststore.type", msg, 1, true)
    end)
  end

  it("returns _CONFIG for settings that exclude each other (finalize)", function()
    local p, msg, code = kafka.producer({
      ["bootstrap.servers"] = dead, ["acks"] = "1", ["enable.idempotence"] = "true",
    })
    assert.is_nil(p)
    assert.are.equal("_CONFIG", code)
    assert.matches("acks", msg, 1, true)
  end)

  it("returns _UNSUPPORTED for a setting this build does not serve", function()
    local p, msg, code = kafka.producer({
      ["bootstrap.servers"] = dead,
      ["transactional.id"] = "kn-spec-ctor",
      ["transaction.two.phase.commit.enable"] = "true",
    })
    assert.is_nil(p)
    assert.are.equal("_UNSUPPORTED", code)
    assert.matches("two-phase", msg, 1, true)
  end)

  it("builds a client after a failed one (the code is per call)", function()
    assert.is_nil((kafka.producer({ ["bootstrap.servers"] = dead, ["bootstrap.server"] = dead })))
    local p = assert(kafka.producer({ ["bootstrap.servers"] = dead }))
    p:close(0)
  end)
end)
