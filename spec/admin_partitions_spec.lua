-- spec/admin_partitions_spec.lua: admin:create_partitions and
-- admin:delete_records against a real broker: growing topics (counts,
-- an explicit assignment, validate_only), a shrinking count and a
-- missing topic failing alone; records deleted before an offset and
-- before the high watermark, an offset past the end failing alone;
-- describe_log_dirs, describe_replica_log_dirs and alter_replica_log_dirs.
local helper = require("spec.helper")
local kafka = require("kafka_native")

describe("kafka_native.admin partitions and records", function()
  local admin

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)

  teardown(function()
    admin:close()
  end)

  local function new_topic(tag, partitions)
    local name = helper.topic(tag)
    local res = assert(admin:create_topics({ { name = name, partitions = partitions } }))
    assert.is_nil(res[name].error, res[name].message)
    assert(admin:wait_for_topics({ name }, 30000))
    return name
  end

  local function wait_partitions(topic, want)
    local deadline, seen = os.time() + 30, nil
    repeat
      seen = #assert(admin:describe_topics({ topic }))[topic].partitions
    until seen == want or os.time() > deadline
    assert.are.equal(want, seen)
  end

  it("grows topics, each for itself", function()
    local grow, shrink, missing = new_topic("grow", 2), new_topic("shrink", 3), helper.topic("missing")
    local res = assert(admin:create_partitions({ [grow] = 4, [shrink] = { count = 2 }, [missing] = 3 }))
    assert.are.same({}, res[grow])
    assert.are.equal("INVALID_PARTITIONS", res[shrink].error)
    assert.matches("would not be an increase", res[shrink].message)
    assert.are.equal("UNKNOWN_TOPIC_OR_PARTITION", res[missing].error)
    wait_partitions(grow, 4)

    res = assert(admin:create_partitions({ [grow] = 8 }, { validate_only = true }))
    assert.are.same({}, res[grow])
    local broker = assert(admin:describe_cluster()).brokers[1].id
    res = assert(admin:create_partitions({ [grow] = { count = 5, assignments = { { broker } } } }))
    assert.are.same({}, res[grow])
    wait_partitions(grow, 5)

    assert.has_error(function() admin:create_partitions({ [grow] = "many" }) end)
    assert.has_error(function() admin:create_partitions({ [grow] = { count = 7, assignments = { {} } } }) end)
  end)

  it("deletes records before an offset", function()
    local topic, missing = new_topic("records", 2), helper.topic("records-missing")
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }))
    for i = 0, 19 do assert(producer:send(topic, "v" .. i, { partition = i % 2 })) end
    assert(producer:flush(30000))
    assert(producer:close())

    local res = assert(admin:delete_records({ [topic] = { [0] = 4, [1] = 50 }, [missing] = { [0] = 1 } }))
    assert.are.same({ low_watermark = 4 }, res[topic][0])
    assert.are.equal("OFFSET_OUT_OF_RANGE", res[topic][1].error)
    assert.are.equal("UNKNOWN_TOPIC_OR_PARTITION", res[missing][0].error)
    assert.are.equal(4, assert(admin:list_offsets({ [topic] = { [0] = "earliest" } }))[topic][0].offset)
    res = assert(admin:delete_records({ [topic] = { [0] = -1 } }))
    assert.are.same({ low_watermark = 10 }, res[topic][0])
    assert.has_error(function() admin:delete_records({ [topic] = { [0] = -2 } }) end)

    -- describe_log_dirs: the replicas of this topic in the broker's dir
    local broker = assert(admin:describe_cluster()).brokers[1].id
    local dirs = assert(admin:describe_log_dirs({ broker, 4242 }))
    assert.are.equal("BROKER_NOT_AVAILABLE", dirs[4242].error)
    local found = 0
    for _, dir in pairs(dirs[broker]) do
      assert.is_nil(dir.error)
      assert.is_true(dir.total_bytes > 0 and dir.usable_bytes <= dir.total_bytes)
      for p, rep in pairs(dir.replicas[topic] or {}) do
        found = found + 1
        assert.are.equal(0, rep.offset_lag)
        assert.is_false(rep.future)
        assert.is_true(rep.size > 0, "partition " .. p)
      end
    end
    assert.are.equal(2, found)
    assert.has_error(function() admin:describe_log_dirs({ "one" }) end)

    -- describe/alter_replica_log_dirs: replica 0 in its dir; moves
    local leader = assert(admin:describe_topics({ topic }))[topic].partitions[1].leader
    local rd = assert(admin:describe_replica_log_dirs({
      { topic = topic, partition = 0, broker = leader },
      { topic = topic, partition = 9, broker = leader },
      { topic = topic, partition = 0, broker = 4242 },
    }))
    assert.are.equal(3, #rd)
    assert.is_nil(rd[1].error, rd[1].message)
    assert.are.equal("/", rd[1].current_dir:sub(1, 1))
    assert.are.equal(0, rd[1].current_lag)
    assert.is_nil(rd[1].future_dir)
    assert.is_nil(rd[2].current_dir)
    assert.are.equal("BROKER_NOT_AVAILABLE", rd[3].error)
    local moved = assert(admin:alter_replica_log_dirs({
      { topic = topic, partition = 0, broker = leader, dir = rd[1].current_dir } }))
    assert.is_nil(moved[1].error, moved[1].message)
    moved = assert(admin:alter_replica_log_dirs({
      { topic = topic, partition = 0, broker = leader, dir = "/no/such/kafka/log/dir" } }))
    assert.are.equal("LOG_DIR_NOT_FOUND", moved[1].error)
    assert.has_error(function() admin:alter_replica_log_dirs({ { topic = topic, partition = 0, broker = leader } }) end)
  end)
end)
