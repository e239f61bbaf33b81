-- spec/admin_acls_spec.lua: admin:create_acls, admin:describe_acls and
-- admin:delete_acls against a real broker (StandardAuthorizer, ACLs only
-- on this spec's own resources), and the ACL enforced: a DENY WRITE for
-- the harness SASL user makes its send over SASL_PLAINTEXT fail with
-- TOPIC_AUTHORIZATION_FAILED until the ACL is deleted.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local sasl_bootstrap = os.getenv("KAFKA_BOOTSTRAP_SASL_PLAINTEXT")
local sasl_user, sasl_password = os.getenv("KN_SASL_USER"), os.getenv("KN_SASL_PASSWORD")
local have = sasl_bootstrap and sasl_bootstrap ~= "" and sasl_user and sasl_password

-- One record by the SASL user: true, or nil, message, code (from the
-- send or from its delivery report).
local function sasl_send(topic)
  local report
  local producer = assert(kafka.producer({
    ["bootstrap.servers"] = sasl_bootstrap,
    ["security.protocol"] = "SASL_PLAINTEXT",
    ["sasl.mechanism"] = "SCRAM-SHA-256",
    ["sasl.jaas.config"] = string.format(
      'org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";',
      sasl_user, sasl_password),
    ["max.block.ms"] = 20000,
  }, { on_delivery = function(r) report = r end }))
  local ok, msg, code = producer:send(topic, "v")
  if ok then
    assert(producer:flush(30000))
    if report.error then ok, msg, code = nil, report.message, report.error end
  end
  producer:close()
  return ok, msg, code
end

describe("kafka_native.admin ACLs", function()
  if not helper.need_secure(have, "KAFKA_BOOTSTRAP_SASL_PLAINTEXT / KN_SASL_USER / KN_SASL_PASSWORD",
    "KAFKA_BOOTSTRAP_SASL_PLAINTEXT") then
    return
  end
  local admin

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)

  teardown(function()
    admin:close()
  end)

  it("creates, describes, enforces and deletes ACLs", function()
    local topic, user = helper.topic("acl"), "User:" .. helper.topic("acluser")
    local alice = "User:" .. sasl_user
    helper.create_topic(admin, topic)
    assert(sasl_send(topic))

    local deny = { resource_type = "topic", resource_name = topic, principal = alice,
                   operation = "write", permission = "deny" }
    local res = assert(admin:create_acls({
      deny,
      { resource_type = "GROUP", resource_name = topic, pattern_type = "prefixed", principal = user,
        operation = "read", permission = "allow" },
      deny,
      { resource_type = "topic", resource_name = topic, principal = user, operation = "any", permission = "allow" },
    }))
    assert.are.equal(3, #res)
    assert.is_nil(res[1].error, res[1].message)
    assert.are.same({ resource_type = "topic", resource_name = topic, pattern_type = "literal", principal = alice,
                      host = "*", operation = "write", permission = "deny" }, res[1])
    assert.is_nil(res[2].error, res[2].message)
    assert.are.equal("INVALID_REQUEST", res[3].error)
    assert.are.equal("Invalid ACL creation: Operation is ANY.", res[3].message)

    local match = { resource_name = topic, pattern_type = "match" }
    local got = helper.wait_for(function() return assert(admin:describe_acls(match)) end,
      function(b) return #b == 2 end)
    table.sort(got, function(a, b) return a.resource_type > b.resource_type end)
    assert.are.same({ resource_type = "topic", resource_name = topic, pattern_type = "literal", principal = alice,
                      host = "*", operation = "write", permission = "deny" }, got[1])
    assert.are.same({ resource_type = "group", resource_name = topic, pattern_type = "prefixed", principal = user,
                      host = "*", operation = "read", permission = "allow" }, got[2])
    local mine = assert(admin:describe_acls({ resource_name = topic, pattern_type = "match", principal = user }))
    assert.are.equal(1, #mine)
    assert.are.equal("group", mine[1].resource_type)

    local ok, _, code = sasl_send(topic)
    assert.is_nil(ok)
    assert.are.equal("TOPIC_AUTHORIZATION_FAILED", code)

    local del = assert(admin:delete_acls({
      { resource_type = "topic", resource_name = topic, pattern_type = "literal", principal = alice },
      { resource_type = "group", resource_name = topic },
      { resource_type = "topic", resource_name = topic .. "-none" },
    }))
    assert.are.equal(3, #del)
    assert.are.equal(1, #del[1].matches)
    assert.are.equal("deny", del[1].matches[1].permission)
    assert.are.equal(1, #del[2].matches)
    assert.are.equal("prefixed", del[2].matches[1].pattern_type)
    assert.are.same({}, del[3].matches)
    helper.wait_for(function() return assert(admin:describe_acls(match)) end, function(b) return #b == 0 end)
    helper.wait_for(function() return { sasl_send(topic) } end, function(r) return r[1] ~= nil and r[1] ~= false end)
  end)

  it("refuses malformed bindings and filters", function()
    assert.has_error(function() admin:create_acls({ { resource_type = "topc", resource_name = "t",
      principal = "User:x", operation = "read", permission = "allow" } }) end)
    assert.has_error(function() admin:create_acls({ { resource_type = "topic", resource_name = "t",
      principal = "User:x", permission = "allow" } }) end)
    assert.has_error(function() admin:describe_acls({ operation = 3 }) end)
  end)
end)
