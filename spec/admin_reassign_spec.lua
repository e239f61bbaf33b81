-- spec/admin_reassign_spec.lua: admin:elect_leaders,
-- admin:alter_partition_reassignments and
-- admin:list_partition_reassignments against a real broker (what one node
-- can show: no election needed, a reassignment onto the current replica,
-- errors per partition, nothing in progress).
local helper = require("spec.helper")
local kafka = require("kafka_native")

describe("kafka_native.admin leaders and reassignments", function()
  local admin

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)

  teardown(function()
    admin:close()
  end)

  it("elects, reassigns and lists per partition", function()
    local topic = helper.topic("reassign")
    helper.create_topic(admin, topic)
    local leader = assert(admin:describe_topics({ topic }))[topic].partitions[1].leader

    local res = assert(admin:elect_leaders("preferred", { [topic] = { 0, 5 } }))
    assert.are.equal("ELECTION_NOT_NEEDED", res[topic][0].error)
    assert.are.equal("UNKNOWN_TOPIC_OR_PARTITION", res[topic][5].error)
    assert(admin:elect_leaders("preferred"))
    assert.has_error(function() admin:elect_leaders("sideways", { [topic] = { 0 } }) end)

    res = assert(admin:alter_partition_reassignments({ [topic] = { [0] = { leader } } }))
    assert.are.same({}, res[topic][0])
    res = assert(admin:alter_partition_reassignments({ [topic] = { [0] = false } }))
    assert.are.equal("NO_REASSIGNMENT_IN_PROGRESS", res[topic][0].error)
    assert.has_error(function() admin:alter_partition_reassignments({ [topic] = { [0] = "x" } }) end)

    assert.are.same({}, assert(admin:list_partition_reassignments({ [topic] = { 0 } })))
    assert.is_nil(assert(admin:list_partition_reassignments())[topic])
  end)
end)
