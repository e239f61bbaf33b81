-- spec/admin_txn_spec.lua: admin:describe_transactions,
-- admin:list_transactions, admin:describe_producers,
-- admin:abort_transaction and admin:fence_producers against a real broker,
-- around a transaction our producer leaves open; after the fence the
-- producer's commit fails as fenced.
local helper = require("spec.helper")
local kafka = require("kafka_native")

describe("kafka_native.admin transactions and producers", function()
  local admin

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
  end)

  teardown(function()
    admin:close()
  end)

  it("describes, lists, aborts and fences an open transaction", function()
    local topic, tid, none = helper.topic("admin-txn"), helper.topic("admin-txn-id"), helper.topic("admin-txn-none")
    helper.create_topic(admin, topic)
    local producer = assert(kafka.producer({
      ["bootstrap.servers"] = helper.bootstrap(),
      ["transactional.id"] = tid,
      ["transaction.timeout.ms"] = 60000,
    }))
    assert(producer:init_transactions(30000))
    assert(producer:begin_transaction())
    assert(producer:send(topic, "open", { partition = 0 }))
    assert(producer:flush(30000))

    local d = assert(admin:describe_transactions({ tid, none }))
    assert.are.equal("Ongoing", d[tid].state, d[tid].message)
    assert.are.same({ [topic] = { 0 } }, d[tid].partitions) -- one partition written
    assert.are.equal(60000, d[tid].timeout_ms)
    assert.is_true(d[tid].start_time_ms > 0)
    assert.are.equal("TRANSACTIONAL_ID_NOT_FOUND", d[none].error)
    local pid, epoch = d[tid].producer_id, d[tid].producer_epoch

    local function has(list, id)
      for _, t in ipairs(list) do if t.transactional_id == id then return t end end
    end
    assert.are.equal("Ongoing", has(assert(admin:list_transactions()), tid).state)
    assert.is_not_nil(has(assert(admin:list_transactions({ states = { "Ongoing" } })), tid))
    assert.is_nil(has(assert(admin:list_transactions({ states = { "CompleteCommit" } })), tid))
    local byid = assert(admin:list_transactions({ producer_ids = { pid } }))
    assert.are.same({ { transactional_id = tid, producer_id = pid, state = "Ongoing" } }, byid)
    assert.are.equal(1, #assert(admin:list_transactions({ pattern = tid })))

    local function mine(states)
      for _, s in ipairs(states[topic][0].producers) do if s.producer_id == pid then return s end end
    end
    local ps = assert(admin:describe_producers({ [topic] = { 0, 9 } }))
    assert.are.equal("UNKNOWN_TOPIC_OR_PARTITION", ps[topic][9].error)
    local st = mine(ps)
    assert.are.equal(epoch, st.producer_epoch)
    assert.are.equal(0, st.txn_start_offset)

    assert(admin:abort_transaction({ topic = topic, partition = 0, producer_id = pid, producer_epoch = epoch,
                                     coordinator_epoch = st.coordinator_epoch or 0 }))
    assert.is_nil(mine(assert(admin:describe_producers({ [topic] = { 0 } }))).txn_start_offset)

    local f = assert(admin:fence_producers({ tid }))
    assert.are.equal(pid, f[tid].producer_id)
    assert.is_true(f[tid].producer_epoch > epoch)
    helper.wait_for(function() return assert(admin:describe_transactions({ tid }))[tid] end,
      function(t) return t.state == "CompleteAbort" or t.state == "Empty" end)
    local ok, _, code = producer:commit_transaction(30000)
    assert.is_nil(ok)
    assert.is_true(code == "PRODUCER_FENCED" or code == "INVALID_PRODUCER_EPOCH" or code == "_FATAL", code)
    producer:close()

    assert.has_error(function() admin:abort_transaction({ topic = topic, partition = 0 }) end)
    assert.has_error(function() admin:list_transactions({ producer_ids = { "x" } }) end)
  end)
end)
