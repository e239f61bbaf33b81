-- spec/admin_groups_spec.lua: the admin's consumer-group methods against
-- a real broker: offsets committed, listed (several groups at once) and
-- deleted; list_groups with filters; describe of simple, KIP-848 and
-- classic groups; per-item errors; removing a static member; and an
-- admin reset honoured by a Lua consumer.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local RECORDS = 20

describe("kafka_native.admin consumer groups", function()
  local admin, topic

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
    topic = helper.topic("admin-groups")
    local res = assert(admin:create_topics({ { name = topic, partitions = 3 } }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }))
    for i = 0, RECORDS - 1 do assert(producer:send(topic, "v" .. i, { partition = 0 })) end
    assert(producer:flush(30000))
    assert(producer:close())
  end)

  teardown(function()
    admin:close()
  end)

  local function member(group, protocol, instance)
    local c = assert(kafka.consumer({
      ["bootstrap.servers"] = helper.bootstrap(), ["group.id"] = group, ["group.protocol"] = protocol,
      ["group.instance.id"] = instance, ["client.id"] = "spec-member", ["auto.offset.reset"] = "earliest",
    }))
    assert(c:subscribe({ topic }))
    return c
  end

  local function find(list, group)
    for _, g in ipairs(list) do if g.group_id == group then return g end end
  end

  it("commits, lists and deletes offsets of simple groups", function()
    local a, b, none = helper.topic("g-a"), helper.topic("g-b"), helper.topic("g-none")
    local res = assert(admin:alter_consumer_group_offsets(a, {
      [topic] = { [0] = 5, [1] = { offset = 7, metadata = "m" }, [2] = -3 } }))
    assert.are.same({}, res[topic][0])
    assert.are.same({}, res[topic][1])
    assert.are.equal("_INVALID_ARG", res[topic][2].error) -- the negative one, alone
    assert(admin:alter_consumer_group_offsets(b, { [topic] = { [0] = 3 } }))

    local got = assert(admin:list_consumer_group_offsets({ a, [b] = { [topic] = { 0, 2 } }, none }))
    assert.are.equal(5, got[a].offsets[topic][0].offset)
    assert.are.equal(7, got[a].offsets[topic][1].offset)
    assert.are.equal("m", got[a].offsets[topic][1].metadata)
    assert.is_nil(got[a].offsets[topic][2]) -- never committed
    assert.are.equal(3, got[b].offsets[topic][0].offset)
    assert.is_nil(got[b].offsets[topic][2].offset) -- asked for, none committed: no offset
    assert.is_nil(got[b].offsets[topic][2].error)
    assert.are.same({}, got[none].offsets)

    local groups = assert(admin:list_groups())
    assert.are.same({ group_id = a, protocol_type = "", state = "Empty", type = "classic" }, find(groups, a))
    assert.is_nil(find(assert(admin:list_groups({ types = { "consumer" } })), a))
    assert.is_not_nil(find(assert(admin:list_groups({ states = { "Empty" } })), a))

    local desc = assert(admin:describe_consumer_groups({ a, none }))
    assert.are.equal("classic", desc[a].type)
    assert.are.equal("Empty", desc[a].state)
    assert.is_true(desc[a].simple)
    assert.are.same({}, desc[a].members)
    assert.are.equal("GROUP_ID_NOT_FOUND", desc[none].error)

    assert.are.same({ [topic] = { [1] = {} } }, assert(admin:delete_consumer_group_offsets(a, { [topic] = { 1 } })))
    got = assert(admin:list_consumer_group_offsets({ a }))
    assert.is_nil(got[a].offsets[topic][1])
    local _, msg, code = admin:delete_consumer_group_offsets(none, { [topic] = { 1 } })
    assert.are.equal("GROUP_ID_NOT_FOUND", code)
    assert.is_string(msg)

    local deleted = assert(admin:delete_consumer_groups({ a, none, b }))
    assert.are.same({}, deleted[a])
    assert.are.same({}, deleted[b])
    assert.are.equal("GROUP_ID_NOT_FOUND", deleted[none].error)
  end)

  it("describes live groups and refuses what a live group forbids", function()
    local g848, gclassic = helper.topic("g-848"), helper.topic("g-classic")
    local cs = { member(g848, "consumer"), member(gclassic, "classic", "inst-1") }
    local deadline = os.time() + 60
    repeat
      local ready = 0
      for _, c in ipairs(cs) do
        assert(c:poll(100))
        if #c:assignment() == 3 then ready = ready + 1 end
      end
    until ready == 2 or os.time() > deadline

    local desc = assert(admin:describe_consumer_groups({ g848, gclassic }))
    for _, g in ipairs({ g848, gclassic }) do
      local d = desc[g]
      assert.is_nil(d.error, d.message)
      assert.are.equal("Stable", d.state)
      assert.are.equal(1, #d.members)
      assert.are.equal("spec-member", d.members[1].client_id)
      local parts = d.members[1].assignment[topic]
      table.sort(parts)
      assert.are.same({ 0, 1, 2 }, parts)
    end
    assert.are.equal("consumer", desc[g848].type)
    assert.are.equal("uniform", desc[g848].assignor)
    assert.is_true(desc[g848].group_epoch > 0)
    assert.is_true(desc[g848].members[1].member_epoch > 0)
    assert.are.equal("classic", desc[gclassic].type)
    assert.are.equal("inst-1", desc[gclassic].members[1].instance_id)
    assert.is_nil(desc[gclassic].members[1].target_assignment)

    -- describe_classic_groups: DescribeGroups only; a KIP-848 group is not one
    local cl = assert(admin:describe_classic_groups({ gclassic, g848 }))
    assert.are.equal("consumer", cl[gclassic].protocol_type)
    assert.are.equal("Stable", cl[gclassic].state)
    assert.are.equal(3, #cl[gclassic].members[1].assignment[topic])
    assert.are.equal("GROUP_ID_NOT_FOUND", cl[g848].error)

    local deleted = assert(admin:delete_consumer_groups({ g848, gclassic }))
    assert.are.equal("NON_EMPTY_GROUP", deleted[g848].error)
    assert.are.equal("NON_EMPTY_GROUP", deleted[gclassic].error)
    local res = assert(admin:alter_consumer_group_offsets(g848, { [topic] = { [0] = 1 } }))
    assert.is_string(res[topic][0].error)

    local removed = assert(admin:remove_members_from_consumer_group(gclassic, { "inst-1", "inst-nobody" },
      { reason = "spec" }))
    assert.are.same({}, removed["inst-1"])
    assert.are.equal("UNKNOWN_MEMBER_ID", removed["inst-nobody"].error)
    assert.are.same({}, assert(admin:describe_consumer_groups({ gclassic }))[gclassic].members)
    for _, c in ipairs(cs) do c:close() end
  end)

  it("resets a group's offsets so that its consumer starts there", function()
    local group = helper.topic("g-reset")
    local function first_read()
      local c = member(group, "consumer")
      local deadline, first = os.time() + 60, nil
      repeat
        for _, r in ipairs(assert(c:poll(200))) do
          if r.partition == 0 and not first then first = r.offset end
        end
      until first or os.time() > deadline
      c:close()
      return assert(first, "nothing read from partition 0")
    end
    assert(admin:alter_consumer_group_offsets(group, { [topic] = { [0] = 12, [1] = 0, [2] = 0 } }))
    assert.are.equal(12, first_read())
    -- shift by -5 from what the group committed
    assert(admin:alter_consumer_group_offsets(group, { [topic] = { [0] = 12 } }))
    local at = assert(admin:list_consumer_group_offsets({ group }))[group].offsets[topic][0].offset
    local res = assert(admin:alter_consumer_group_offsets(group, { [topic] = { [0] = at - 5 } }))
    assert.are.same({}, res[topic][0])
    assert.are.equal(7, first_read())
  end)

  it("raises on malformed arguments", function()
    assert.has_error(function() admin:list_consumer_group_offsets({ g = { [topic] = { "x" } } }) end)
    assert.has_error(function() admin:alter_consumer_group_offsets("g", { [topic] = { [0] = "x" } }) end)
    assert.has_error(function() admin:delete_consumer_groups({ 1 }) end)
    assert.has_error(function() admin:list_groups({ types = "consumer" }) end)
    assert.has_error(function() admin:remove_members_from_consumer_group("g", {}) end)
  end)
end)
