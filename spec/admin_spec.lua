-- spec/admin_spec.lua: kafka_native.admin against a real broker:
-- creating, listing, describing and deleting topics, per-topic errors,
-- configuration errors, and the handle's lifetime rules.
local helper = require("spec.helper")
local kafka = require("kafka_native")

describe("kafka_native", function()
  it("has a version and error names", function()
    assert.is_string(kafka.version)
    assert.are.equal("TOPIC_ALREADY_EXISTS", kafka.error_name(36))
    assert.are.equal("_TIMED_OUT", kafka.error_name(-206))
    assert.is_string(kafka.error_message(3))
  end)

  it("shows the effective configuration of a client kind", function()
    local conf = assert(kafka.config("producer", { ["bootstrap.servers"] = "127.0.0.1:9092", acks = 1,
      ["ssl.key.password"] = "secret" }))
    assert.are.same({ value = "1", default = false }, conf.acks)
    assert.are.equal("false", conf["enable.idempotence"].value) -- Java's rule: acks=1 turns the default off
    assert.is_true(conf["enable.idempotence"].default)
    assert.is_true(conf["linger.ms"].default)
    assert.are.equal("[hidden]", conf["ssl.key.password"].value)
    assert.is_nil(conf["group.id"]) -- a consumer key
    local consumer = assert(kafka.config("consumer", { ["bootstrap.servers"] = "127.0.0.1:9092" }))
    assert.is_nil(consumer["group.id"].value) -- null, no default
    local none, msg, code = kafka.config("admin", { ["bootstrap.server"] = "x:1" })
    assert.is_nil(none)
    assert.are.equal("_CONFIG", code)
    assert.matches("bootstrap.servers", msg)
    assert.has_error(function() kafka.config("streams", {}) end)
    assert.has_error(function() kafka.config("admin", 42) end)
  end)

  it("maps error names back to codes and says which are retriable", function()
    assert.are.equal(36, kafka.error_code("TOPIC_ALREADY_EXISTS"))
    assert.are.equal(-206, kafka.error_code("_TIMED_OUT"))
    assert.are.equal(-1, kafka.error_code("UNKNOWN_SERVER_ERROR"))
    assert.is_nil(kafka.error_code("NO_SUCH_ERROR"))
    assert.is_nil(kafka.error_code("_NO_SUCH_ERROR"))
    for _, code in ipairs({ 3, 36, -206, -222 }) do
      assert.are.equal(code, kafka.error_code(kafka.error_name(code)))
    end
    assert.is_true(kafka.error_is_retriable("NOT_LEADER_OR_FOLLOWER"))
    assert.is_true(kafka.error_is_retriable(6))
    assert.is_false(kafka.error_is_retriable("TOPIC_ALREADY_EXISTS"))
    assert.has_error(function() kafka.error_is_retriable("NO_SUCH_ERROR") end)
    assert.has_error(function() kafka.error_is_retriable({}) end)
  end)
end)

describe("kafka_native.admin", function()
  local admin

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)

  teardown(function()
    admin:close()
  end)

  it("creates, lists, describes and deletes topics", function()
    local plain, compacted, eight = helper.topic("plain"), helper.topic("compact"), helper.topic("eight")

    local results = assert(admin:create_topics({
      { name = plain, partitions = 3, replication_factor = 1 },
      { name = compacted, partitions = 1, configs = { ["cleanup.policy"] = "compact" } },
      { name = eight, partitions = 8 },
    }, { timeout_ms = 30000 }))
    for _, name in ipairs({ plain, compacted, eight }) do
      assert.is_nil(results[name].error, results[name].message)
      assert.are.equal(22, #results[name].topic_id)
    end
    assert.are.equal(3, results[plain].partitions)
    assert.are.equal(8, results[eight].partitions)
    assert.are.equal(1, results[plain].replication_factor)
    -- absent: the broker's default.replication.factor
    assert.is_true(results[eight].replication_factor >= 1)

    assert(admin:wait_for_topics({ plain, compacted, eight }, 30000))

    local listed = {}
    for _, t in ipairs(assert(admin:list_topics())) do
      listed[t.name] = t
      assert.is_false(t.internal)
    end
    assert.are.equal(results[plain].topic_id, listed[plain].topic_id)
    assert.is_not_nil(listed[compacted])
    assert.is_not_nil(listed[eight])

    local described = assert(admin:describe_topics({ eight, compacted }))
    local topic = described[eight]
    assert.are.equal(eight, topic.name)
    assert.are.equal(results[eight].topic_id, topic.topic_id)
    assert.is_false(topic.internal)
    assert.are.equal(8, #topic.partitions)
    for i, p in ipairs(topic.partitions) do
      assert.are.equal(i - 1, p.partition)
      if helper.brokers == 1 then
        assert.are.equal(1, p.leader)
        assert.are.same({ 1 }, p.replicas)
        assert.are.same({ 1 }, p.isr)
      else -- a fresh topic: led by its preferred replica, all in sync
        assert.are.equal(p.replicas[1], p.leader)
        assert.are.equal(#p.replicas, #p.isr)
      end
      assert.are.same({}, p.offline)
    end
    assert.are.equal(1, #described[compacted].partitions)

    local deleted = assert(admin:delete_topics({ plain, compacted, eight }))
    for _, name in ipairs({ plain, compacted, eight }) do
      assert.is_nil(deleted[name].error, deleted[name].message)
    end
  end)

  it("reports per-topic errors without failing the whole call", function()
    local name, other = helper.topic("dup"), helper.topic("other")
    assert(admin:create_topics({ { name = name } }))

    local results = assert(admin:create_topics({
      { name = name, partitions = 1 },
      { name = other, partitions = 1 },
      { name = "bad/name", partitions = 1 },
    }))
    assert.are.equal("TOPIC_ALREADY_EXISTS", results[name].error)
    assert.are.equal(36, results[name].code)
    assert.truthy(results[name].message:find(name, 1, true))
    assert.is_nil(results[other].error)
    assert.are.equal("INVALID_TOPIC_EXCEPTION", results["bad/name"].error)
    assert.is_string(results["bad/name"].message)
    assert(admin:wait_for_topics({ name, other }, 30000))

    local missing = helper.topic("missing")
    local described = assert(admin:describe_topics({ name, missing }))
    assert.is_nil(described[name].error)
    assert.are.equal("UNKNOWN_TOPIC_OR_PARTITION", described[missing].error)

    local deleted = assert(admin:delete_topics({ name, missing, other }))
    assert.is_nil(deleted[name].error)
    assert.is_nil(deleted[other].error)
    assert.are.equal("UNKNOWN_TOPIC_OR_PARTITION", deleted[missing].error)
  end)

  it("validates without creating", function()
    local name = helper.topic("dry")
    local results = assert(admin:create_topics({ { name = name, partitions = 2 } }, { validate_only = true }))
    assert.is_nil(results[name].error)
    results = assert(admin:create_topics({
      { name = name, configs = { ["cleanup.policy"] = "sideways" } },
    }, { validate_only = true }))
    assert.are.equal("INVALID_CONFIG", results[name].error)
    assert.are.equal("UNKNOWN_TOPIC_OR_PARTITION", assert(admin:describe_topics({ name }))[name].error)
  end)

  it("places partitions by explicit replica assignment", function()
    local name = helper.topic("placed")
    local results = assert(admin:create_topics({
      { name = name, replica_assignment = { [0] = { 1 }, [1] = { 1 }, [2] = { 1 } } },
    }))
    assert.is_nil(results[name].error, results[name].message)
    assert.are.equal(3, results[name].partitions)
    assert(admin:delete_topics({ name }))
  end)

  it("describes the cluster", function()
    local cluster = assert(admin:describe_cluster())
    assert.is_string(cluster.cluster_id)
    assert.is_true(#cluster.cluster_id > 0)
    assert.are.equal(helper.brokers, #cluster.brokers)
    for i, b in ipairs(cluster.brokers) do
      assert.are.equal(i, b.id) -- the harness numbers its nodes from 1
      assert.truthy(helper.bootstrap():find(b.host .. ":" .. b.port, 1, true))
      assert.are.equal("rack" .. i, b.rack) -- tools/kafka/broker: broker.rack=rack<n>
    end
    assert.is_true(cluster.controller_id >= 1 and cluster.controller_id <= helper.brokers)
  end)

  it("lists internal topics only when asked", function()
    for _, t in ipairs(assert(admin:list_topics({ internal = false }))) do
      assert.is_false(t.internal)
    end
    assert.is_table(assert(admin:list_topics({ internal = true })))
  end)
end)

describe("kafka_native.admin configuration", function()
  it("returns nil, message, code for an unknown key and suggests the nearest one", function()
    local admin, message, code = kafka.admin({ ["bootstrap.server"] = helper.bootstrap() })
    assert.is_nil(admin)
    assert.are.equal("_CONFIG", code)
    assert.truthy(message:find("bootstrap.servers", 1, true))
  end)

  it("returns nil, message, code for a bad value", function()
    local admin, message, code = kafka.admin({
      ["bootstrap.servers"] = helper.bootstrap(),
      ["request.timeout.ms"] = "soon",
    })
    assert.is_nil(admin)
    assert.are.equal("_CONFIG", code)
    assert.truthy(message:find("request.timeout.ms", 1, true))
  end)

  it("converts numbers, booleans and lists to Kafka's strings", function()
    local admin = assert(kafka.admin({
      ["bootstrap.servers"] = { helper.bootstrap() },
      ["request.timeout.ms"] = 30000,
      ["enable.metrics.push"] = false,
      ["client.id"] = "spec-admin",
    }))
    assert.is_table(assert(admin:list_topics()))
    admin:close()
  end)

  it("reads a .properties file", function()
    local path = helper.write_temp("# admin settings\nbootstrap.servers=" .. helper.bootstrap() ..
      "\nclient.id = from-file\n")
    local admin = assert(kafka.admin(path))
    assert.is_table(assert(admin:describe_cluster()))
    admin:close()
    os.remove(path)

    local bad = helper.write_temp("bootstrap.servers=" .. helper.bootstrap() .. "\nno.such.key=1\n")
    local none, message, code = kafka.admin(bad)
    os.remove(bad)
    assert.is_nil(none)
    assert.are.equal("_CONFIG", code)
    assert.truthy(message:find("no.such.key", 1, true))
  end)

  it("raises on arguments of the wrong type", function()
    assert.has_error(function() kafka.admin() end)
    assert.has_error(function() kafka.admin(42) end)
    assert.has_error(function() kafka.admin({ [1] = "x" }) end)
    assert.has_error(function() kafka.admin({ ["client.id"] = function() end }) end)
    local admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
    assert.has_error(function() admin:create_topics("t") end)
    assert.has_error(function() admin:create_topics({ { partitions = 1 } }) end)
    assert.has_error(function() admin:create_topics({ { name = "x", partitions = "many" } }) end)
    assert.has_error(function() admin:delete_topics({ 1, 2 }) end)
    assert.has_error(function() admin:list_topics({ timeout_ms = "soon" }) end)
    admin:close()
  end)

  it("times out as a whole when no broker answers", function()
    local admin = assert(kafka.admin({ ["bootstrap.servers"] = "127.0.0.1:1" }))
    local started = os.time()
    local topics, message, code = admin:list_topics({ timeout_ms = 1000 })
    assert.is_nil(topics)
    assert.are.equal("_TIMED_OUT", code)
    assert.is_string(message)
    assert.is_true(os.time() - started < 10)
    admin:close()
  end)
end)

describe("kafka_native.admin lifetime", function()
  it("close() is idempotent and a closed handle raises a clear error", function()
    local admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
    admin:close()
    admin:close()
    assert.has_error(function() admin:list_topics() end, "admin client is closed")
    assert.truthy(tostring(admin):find("closed", 1, true))
  end)

  it("is closed by garbage collection", function()
    local admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
    admin = nil -- luacheck: ignore
    collectgarbage()
    collectgarbage()
  end)

  if _VERSION == "Lua 5.4" and type(jit) ~= "table" then
    it("is closed at the end of a <close> scope", function()
      local chunk = assert(load([[
        local kafka, bootstrap = ...
        local kept
        do
          local admin <close> = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
          kept = admin
          assert(admin:describe_cluster())
        end
        return kept
      ]]))
      local kept = chunk(kafka, helper.bootstrap())
      assert.has_error(function() kept:list_topics() end, "admin client is closed")
    end)
  end
end)
