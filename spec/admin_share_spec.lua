-- spec/admin_share_spec.lua: the admin's share-group, streams-group and
-- KRaft-voter methods through Lua against a real broker: a share group
-- with a live Lua member listed by type and described; its start offsets
-- listed (with lag), refused while it has a member, set once it is empty
-- (a negative one failing alone) and honoured by a new member; a topic's
-- state deleted (an unknown topic failing alone); the group deleted. For
-- streams groups (which need Kafka Streams, or a member speaking
-- StreamsGroupHeartbeat itself: tests/c/support/member/kn_streams_member)
-- a live group described with every field (topology with the changelog's
-- declared configs, the member's rack, endpoint, tags, task offsets and
-- tasks), the describe of an unknown group and the offset calls' shapes;
-- the voter calls answered as the static test quorum answers them.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local PER = 10

describe("kafka_native.admin share and streams groups", function()
  local bootstrap, admin

  setup(function()
    bootstrap = helper.bootstrap()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
  end)

  teardown(function()
    if admin then admin:close() end
  end)

  local function member(group, topic)
    local sc = assert(kafka.share_consumer({
      ["bootstrap.servers"] = bootstrap, ["group.id"] = group, ["client.id"] = "spec-share-member",
    }))
    assert(sc:subscribe({ topic }))
    return sc
  end

  -- Polls until n records came; returns the lowest offset per partition.
  local function take(sc, n)
    local got, first = 0, {}
    local deadline = os.time() + 60
    while got < n and os.time() < deadline do
      for _, r in ipairs(assert(sc:poll(200))) do
        got = got + 1
        if not first[r.partition] or r.offset < first[r.partition] then first[r.partition] = r.offset end
      end
    end
    assert(sc:commit_sync(30000))
    assert.are.equal(n, got)
    return first
  end

  it("describes, lists, alters and deletes a share group's offsets, and the group", function()
    local topic = helper.topic("admin-share")
    local group, none = topic .. "-g", topic .. "-none"
    local res = assert(admin:create_topics({ { name = topic, partitions = 2 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    for i = 0, 2 * PER - 1 do assert(producer:send(topic, "v" .. i, { partition = i % 2 })) end
    assert(producer:flush(30000))
    producer:close()
    assert(admin:incremental_alter_configs({
      group = { [group] = { { op = "set", name = "share.auto.offset.reset", value = "earliest" } } },
    }))
    helper.wait_for(function() return admin:describe_configs({ group = { group } }) end, function(d)
      local e = d and d.group and d.group[group] and d.group[group].configs["share.auto.offset.reset"]
      return e ~= nil and e.value == "earliest"
    end)

    local sc = member(group, topic)
    take(sc, 2 * PER)
    local listed = assert(admin:list_groups({ types = { "share" } }))
    local found
    for _, g in ipairs(listed) do if g.group_id == group then found = g end end
    assert.are.equal("share", found and found.type)

    local d = helper.wait_for(function() return admin:describe_share_groups({ group, none }) end, function(d)
      return d and d[group].state == "Stable" and #d[group].members == 1
    end)
    assert.are.equal("share", d[group].type)
    assert.are.equal(1, d[group].coordinator)
    local m = d[group].members[1]
    assert.are.equal("spec-share-member", m.client_id)
    assert.are.same({ 0, 1 }, (function() local t = m.assignment[topic]; table.sort(t); return t end)())
    assert.are.equal("GROUP_ID_NOT_FOUND", d[none].error)

    local o = helper.wait_for(function() return admin:list_share_group_offsets({ group }) end, function(o)
      local p = o and o[group].offsets and o[group].offsets[topic]
      return p and p[0] and p[1] and p[0].lag == 0 and p[1].lag == 0
    end)
    assert.is_nil(o[group].error)

    local r, msg, code = admin:alter_share_group_offsets(group, { [topic] = { [0] = 3, [1] = 5 } })
    assert.is_nil(r)
    assert.are.equal("NON_EMPTY_GROUP", code, msg)
    assert(sc:close())

    r = helper.wait_for(function()
      return admin:alter_share_group_offsets(group, { [topic] = { [0] = 3, [1] = 5, [7] = -1 } })
    end, function(r) return r ~= nil end)
    assert.are.same({}, r[topic][0])
    assert.are.same({}, r[topic][1])
    assert.are.equal("_INVALID_ARG", r[topic][7].error)
    o = assert(admin:list_share_group_offsets({ [group] = { [topic] = { 0, 1 } } }))
    assert.are.equal(3, o[group].offsets[topic][0].offset)
    assert.are.equal(5, o[group].offsets[topic][1].offset)
    assert.are.equal(PER - 3, o[group].offsets[topic][0].lag)

    sc = member(group, topic)
    local first = take(sc, (PER - 3) + (PER - 5))
    assert.are.equal(3, first[0])
    assert.are.equal(5, first[1])
    assert(sc:close())

    local del = helper.wait_for(function()
      return admin:delete_share_group_offsets(group, { topic, "no-such-share-topic" })
    end, function(del) return del and del[topic].code ~= "NON_EMPTY_GROUP" end)
    assert.are.same({}, del[topic])
    assert.are.equal("UNKNOWN_TOPIC_OR_PARTITION", del["no-such-share-topic"].error)
    o = assert(admin:list_share_group_offsets({ group }))
    assert.is_nil(o[group].offsets[topic])

    local gone = assert(admin:delete_share_groups({ group, none }))
    assert.are.same({}, gone[group])
    assert.are.equal("GROUP_ID_NOT_FOUND", gone[none].error)
    assert.are.equal("GROUP_ID_NOT_FOUND", assert(admin:describe_share_groups({ group }))[group].error)
  end)

  it("describes a live streams group with every field", function()
    local build = helper.cpath:match("^(.*)/lua/[^/]+/%?%.so$")
    local exe = build and (build .. "/tests/c/kn_streams_member")
    local f = exe and io.open(exe)
    assert(f, "kn_streams_member not built next to the Lua module (" .. tostring(exe) .. ")")
    f:close()
    local topic = helper.topic("admin-streams-live")
    local changelog = topic .. "-store-changelog"
    helper.create_topic(admin, topic, 2)
    helper.create_topic(admin, changelog, 2)
    local group = topic .. "-g"
    local p = assert(io.popen(string.format("%s %s %s %s 120 2>&1", exe, bootstrap, topic, group)))
    local pid
    for line in p:lines() do
      pid = line:match("^stable (%d+)$")
      if pid then break end
    end
    assert(pid, "the streams member never became stable")
    local ok, err = pcall(function()
      local d = assert(admin:describe_streams_groups({ group }))[group]
      assert.is_nil(d.error, d.message)
      assert.are.equal("streams", d.type)
      assert.are.equal("Stable", d.state)
      assert.are.equal(0, d.topology_epoch)
      local sub = d.subtopologies[1]
      assert.are.equal("0", sub.id)
      assert.are.same({ topic }, sub.source_topics)
      assert.are.same({ changelog }, sub.state_changelog_topics)
      local info = sub.topic_info[changelog]
      assert.are.equal(1, info.replication_factor)
      assert.are.same({ ["cleanup.policy"] = "compact", ["min.compaction.lag.ms"] = "1000" }, info.configs)
      assert.are.equal(1, #d.members)
      local m = d.members[1]
      assert.are.equal("kn-process-1", m.process_id)
      assert.are.equal("kn-rack-a", m.rack_id)
      assert.are.equal(0, m.topology_epoch)
      assert.is_false(m.is_classic)
      assert.are.same({ host = "iq.kn.example", port = 8080 }, m.user_endpoint)
      assert.are.same({ zone = "z1", tier = "gold" }, m.client_tags)
      -- Kafka 4.3's coordinator keeps no task offsets (Java shows none).
      assert.are.same({}, m.task_offsets)
      assert.are.same({}, m.task_end_offsets)
      local active = m.tasks.active["0"]
      table.sort(active)
      assert.are.same({ 0, 1 }, active)
    end)
    os.execute("kill " .. pid)
    p:close()
    assert(ok, err)
  end)

  it("describes an unknown streams group and runs the streams offset calls", function()
    local topic = helper.topic("admin-streams")
    helper.create_topic(admin, topic)
    local group = topic .. "-g"
    local d = assert(admin:describe_streams_groups({ group }))
    assert.are.equal("GROUP_ID_NOT_FOUND", d[group].error)
    -- A group nobody joined: the offset calls are the consumer-group ones.
    assert.are.same({}, assert(admin:alter_streams_group_offsets(group, { [topic] = { [0] = 2 } }))[topic][0])
    local o = assert(admin:list_streams_group_offsets({ group }))
    assert.are.equal(2, o[group].offsets[topic][0].offset)
    assert.are.same({}, assert(admin:delete_streams_group_offsets(group, { [topic] = { 0 } }))[topic][0])
    assert.are.same({}, assert(admin:delete_streams_groups({ group }))[group])
  end)

  it("answers voter changes as the static quorum does", function()
    local ok, msg, code = admin:remove_raft_voter(9999, "AAAAAAAAAAAAAAAAAAAAAQ")
    assert.is_nil(ok)
    assert.are.equal("UNSUPPORTED_VERSION", code, msg)
    ok, msg, code = admin:add_raft_voter(9999, "AAAAAAAAAAAAAAAAAAAAAQ",
      { { name = "CONTROLLER", host = "127.0.0.1", port = 9 } }, { timeout_ms = 30000 })
    assert.is_nil(ok)
    assert.are.equal("UNSUPPORTED_VERSION", code, msg)
    assert.has_error(function() admin:add_raft_voter(1, "AAAAAAAAAAAAAAAAAAAAAQ", {}) end)
    ok, msg, code = admin:remove_raft_voter(1, "not-a-uuid")
    assert.is_nil(ok)
    assert.are.equal("_INVALID_ARG", code, msg)
  end)
end)
