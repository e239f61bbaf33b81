-- spec/admin_cluster_spec.lua: admin:describe_features and
-- admin:describe_metadata_quorum against a real broker.
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
end)
