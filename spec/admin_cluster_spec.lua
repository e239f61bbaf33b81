-- spec/admin_cluster_spec.lua: admin:describe_features,
-- admin:describe_metadata_quorum, admin:update_features,
-- admin:unregister_broker and admin:list_config_resources against a real
-- broker.
local helper = require("spec.helper")
local kafka = require("kafka_native")

describe("kafka_native.admin cluster information", function()
  local admin

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)

  teardown(function()
    admin:close()
  end)

  it("describes the finalized features within the supported ranges", function()
    local f = assert(admin:describe_features())
    assert.is_true(f.finalized_epoch >= 0)
    local level, range = f.finalized["metadata.version"].max_level, f.supported["metadata.version"]
    assert.is_true(level >= range.min_version and level <= range.max_version)
  end)

  it("describes the metadata quorum", function()
    local q = assert(admin:describe_metadata_quorum({ timeout_ms = 30000 }))
    assert.is_true(q.high_watermark > 0)
    local leader
    for _, v in ipairs(q.voters) do
      if v.replica_id == q.leader_id then leader = v end
    end
    assert.is_not_nil(leader, "the leader is a voter")
    assert.is_true(leader.log_end_offset >= q.high_watermark)
    assert.is_table(q.observers)
  end)

  it("updates a feature to the level it has, refusing what the broker refuses", function()
    local level = assert(admin:describe_features()).finalized["group.version"].max_level
    assert(admin:update_features({ { feature = "group.version", max_version_level = level } }, { validate_only = true }))
    assert(admin:update_features({ { feature = "group.version", max_version_level = level } }))
    local ok, msg = admin:update_features({ { feature = "no.such.feature", max_version_level = 1 } },
      { validate_only = true })
    assert.is_nil(ok)
    assert.truthy(msg:find("no.such.feature", 1, true))
    assert.has_error(function() admin:update_features({ { feature = "group.version", max_version_level = 1,
      upgrade_type = "sideways" } }) end)
  end)

  it("refuses to unregister a broker that never registered", function()
    local ok, _, code = admin:unregister_broker(9999)
    assert.is_nil(ok)
    assert.are.equal("BROKER_ID_NOT_REGISTERED", code)
  end)

  it("lists config resources by type", function()
    local topic = helper.topic("cfg-res")
    helper.create_topic(admin, topic)
    local res = assert(admin:incremental_alter_configs({
      topic = { [topic] = { { op = "set", name = "retention.ms", value = 3600000 } } } }))
    assert.are.same({}, res.topic[topic])
    local got = helper.wait_for(function() return assert(admin:list_config_resources({ "topic" })) end,
      function(l)
        for _, r in ipairs(l) do if r.name == topic then return true end end
        return false
      end)
    for _, r in ipairs(got) do assert.are.equal("topic", r.type) end
    assert.has_error(function() admin:list_config_resources({ "nonsense" }) end)
  end)
end)
