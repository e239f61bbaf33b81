-- spec/transaction_spec.lua: the producer's transactions against a real
-- broker: committed records are what a read_committed consumer sees and
-- aborted ones are not; send_offsets_to_transaction commits a group's
-- input offsets only with the transaction (consume-transform-produce
-- with consumer:group_metadata()); errors say what may be done next
-- (nil, message, code, kind: "abortable", "fatal", "retriable" or nil);
-- and examples/lua/transactional_copy.lua runs.
local helper = require("spec.helper")
local kafka = require("kafka_native")

describe("producer transactions", function()
  local admin, bootstrap

  setup(function()
    bootstrap = helper.bootstrap()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
  end)

  teardown(function()
    admin:close()
  end)

  local function new_topic(tag, partitions, configs)
    local name = helper.topic(tag)
    local res = assert(admin:create_topics({ { name = name, partitions = partitions or 1, configs = configs } },
      { timeout_ms = 30000 }))
    assert.is_nil(res[name].error, res[name].message)
    assert(admin:wait_for_topics({ name }, 30000))
    return name
  end

  local function txn_producer(id, opts)
    return assert(kafka.producer({
      ["bootstrap.servers"] = bootstrap,
      ["transactional.id"] = id,
      ["linger.ms"] = 0,
    }, opts))
  end

  local function new_consumer(extra)
    local conf = { ["bootstrap.servers"] = bootstrap, ["auto.offset.reset"] = "earliest" }
    for k, v in pairs(extra or {}) do conf[k] = v end
    return assert(kafka.consumer(conf))
  end

  -- Reads the topic's partition 0 until a record with value `last`
  -- arrived (bounded); returns the values.
  local function read_until(consumer, topic, last)
    assert(consumer:assign({ { topic = topic, partition = 0, offset = "beginning" } }))
    local values, done = {}, false
    local deadline = os.time() + 20
    while not done and os.time() <= deadline do
      for _, r in ipairs(assert(consumer:poll(200))) do
        values[#values + 1] = r.value
        done = done or r.value == last
      end
    end
    return values
  end

  it("shows committed records to read_committed and hides aborted ones", function()
    local topic = new_topic("txn")
    local reports = {}
    local producer = txn_producer(helper.topic("txn-id"),
      { on_delivery = function(r) reports[#reports + 1] = r end })
    assert.are.equal("UNINITIALIZED", producer:transaction_state())
    assert(producer:init_transactions(30000))
    assert.are.equal("READY", producer:transaction_state())
    -- KIP-890: the cluster's transaction.version decides (2 on a new 4.x
    -- cluster); under 2 every commit and abort bumps the epoch.
    local m0 = producer:metrics()
    assert.is_true(m0.transaction_version == 1 or m0.transaction_version == 2)
    assert.is_true(m0.producer_id >= 0 and m0.producer_epoch >= 0)

    assert(producer:begin_transaction())
    assert.are.equal("IN_TRANSACTION", producer:transaction_state())
    for i = 1, 3 do assert(producer:send(topic, "committed-" .. i, { partition = 0 })) end
    assert(producer:commit_transaction(30000))
    local m1 = producer:metrics()
    assert.are.equal(m0.producer_id, m1.producer_id)
    assert.are.equal(m0.producer_epoch + (m0.transaction_version == 2 and 1 or 0), m1.producer_epoch)
    if m0.transaction_version == 2 then
      assert.are.equal(0, m1.txn_add_partitions_requests) -- the leader added the partition
    else
      assert.is_true(m1.txn_add_partitions_requests >= 1)
    end
    assert.are.equal(3, #reports) -- served by commit_transaction
    for _, r in ipairs(reports) do assert.is_nil(r.error) end

    assert(producer:begin_transaction())
    for i = 1, 3 do assert(producer:send(topic, "aborted-" .. i, { partition = 0 })) end
    assert(producer:flush(30000)) -- on the broker, then aborted
    assert(producer:abort_transaction(30000))
    assert.are.equal("READY", producer:transaction_state())

    assert(producer:begin_transaction())
    assert(producer:send(topic, "last", { partition = 0 }))
    assert(producer:commit_transaction(30000))
    assert(producer:close())

    local committed = new_consumer({ ["isolation.level"] = "read_committed" })
    assert.are.same({ "committed-1", "committed-2", "committed-3", "last" }, read_until(committed, topic, "last"))
    assert(committed:close())
    local everything = new_consumer({ ["isolation.level"] = "read_uncommitted" })
    assert.are.same({ "committed-1", "committed-2", "committed-3", "aborted-1", "aborted-2", "aborted-3", "last" },
      read_until(everything, topic, "last"))
    assert(everything:close())
    admin:delete_topics({ topic })
  end)

  it("commits the input offsets of a consume-transform-produce loop only with the transaction", function()
    local input, output = new_topic("txn-in"), new_topic("txn-out")
    local plain = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    for i = 1, 10 do assert(plain:send(input, "v" .. i, { partition = 0 })) end
    assert(plain:flush(30000))
    assert(plain:close())

    local group = helper.topic("txn-group")
    local consumer = new_consumer({ ["group.id"] = group, ["enable.auto.commit"] = false,
      ["isolation.level"] = "read_committed" })
    local assigned = false
    assert(consumer:subscribe({ input }, { on_assigned = function() assigned = true end }))
    local producer = txn_producer(helper.topic("txn-ctp"))
    assert(producer:init_transactions(30000))

    local got = {}
    local deadline = os.time() + 30
    while #got < 10 and os.time() <= deadline do
      for _, r in ipairs(assert(consumer:poll(200))) do got[#got + 1] = r end
    end
    assert.is_true(assigned)
    assert.are.equal(10, #got)
    local gm = assert(consumer:group_metadata())
    assert.are.equal(group, gm.group_id)
    assert.is_true(gm.generation >= 1)
    assert.are_not.equal("", gm.member_id)

    -- an aborted transaction commits no offset
    assert(producer:begin_transaction())
    assert(producer:send(output, "not this", { partition = 0 }))
    assert(producer:send_offsets_to_transaction({ { topic = input, partition = 0, offset = 5 } }, gm, 30000))
    assert(producer:abort_transaction(30000))
    assert.is_nil(assert(consumer:committed({ { topic = input, partition = 0 } }, 10000))[1].offset)

    -- the committed one commits the position, with its metadata
    assert(producer:begin_transaction())
    for _, r in ipairs(got) do assert(producer:send(output, r.value:upper(), { partition = 0 })) end
    assert(producer:send_offsets_to_transaction(
      { { topic = input, partition = 0, offset = consumer:position(input, 0), metadata = "txn" } },
      consumer:group_metadata(), 30000))
    assert(producer:commit_transaction(30000))
    local c = assert(consumer:committed({ { topic = input, partition = 0 } }, 10000))[1]
    assert.are.equal(10, c.offset)
    assert.are.equal("txn", c.metadata)
    assert(producer:close())
    assert(consumer:close())

    local reader = new_consumer({ ["isolation.level"] = "read_committed" })
    local values = read_until(reader, output, "V10")
    assert.are.same({ "V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8", "V9", "V10" }, values)
    assert(reader:close())
    admin:delete_topics({ input, output })
  end)

  it("says a failed record makes the transaction abortable, and goes on after the abort", function()
    -- the topic takes records up to 1,000 bytes: a bigger one fails on
    -- the broker, after send accepted it
    local topic = new_topic("txn-abortable", 1, { ["max.message.bytes"] = "1000" })
    local failed
    local producer = txn_producer(helper.topic("txn-abortable-id"), { log_level = "error" })
    assert(producer:init_transactions(30000))
    assert(producer:begin_transaction())
    assert(producer:send(topic, "small", { partition = 0 }))
    assert(producer:send(topic, string.rep("x", 5000), { partition = 0,
      on_delivery = function(r) failed = r end }))
    local ok, msg, code, kind = producer:commit_transaction(30000)
    assert.is_nil(ok)
    assert.are.equal("TRANSACTION_ABORTABLE", code)
    assert.are.equal("abortable", kind)
    assert.is_string(msg)
    assert.is_table(failed)
    assert.is_string(failed.error)
    assert.are.equal("ABORTABLE_ERROR", producer:transaction_state())
    -- only abort is allowed now
    ok, _, code, kind = producer:send(topic, "more", { partition = 0 })
    assert.is_nil(ok)
    assert.are.equal("TRANSACTION_ABORTABLE", code)
    assert.are.equal("abortable", kind)
    assert(producer:abort_transaction(30000))
    assert(producer:begin_transaction())
    assert(producer:send(topic, "after", { partition = 0 }))
    assert(producer:commit_transaction(30000))
    assert(producer:close())
    local reader = new_consumer({ ["isolation.level"] = "read_committed" })
    assert.are.same({ "after" }, read_until(reader, topic, "after"))
    assert(reader:close())
    admin:delete_topics({ topic })
  end)

  it("says a fenced producer is fatal", function()
    local topic = new_topic("txn-fenced")
    local id = helper.topic("txn-fenced-id")
    local old = txn_producer(id)
    assert(old:init_transactions(30000))
    assert(old:begin_transaction())
    assert(old:send(topic, "zombie", { partition = 0 }))
    -- Written before the fencing: a Produce still in flight when the new
    -- producer bumps the epoch is answered INVALID_PRODUCER_EPOCH, which
    -- is abortable (KIP-588, as in Java), not the fencing this case is
    -- about; the commit's EndTxn is what must say PRODUCER_FENCED.
    assert(old:flush(30000))
    local new = txn_producer(id)
    assert(new:init_transactions(30000)) -- fences `old`, aborts its transaction
    local ok, msg, code, kind = old:commit_transaction(30000)
    assert.is_nil(ok)
    assert.is_string(msg)
    assert.is_string(code)
    assert.are.equal("fatal", kind)
    assert.are.equal("FATAL_ERROR", old:transaction_state())
    assert(old:close())
    assert(new:begin_transaction())
    assert(new:send(topic, "alive", { partition = 0 }))
    assert(new:commit_transaction(30000))
    assert(new:close())
    local reader = new_consumer({ ["isolation.level"] = "read_committed" })
    assert.are.same({ "alive" }, read_until(reader, topic, "alive"))
    assert(reader:close())
    admin:delete_topics({ topic })
  end)

  it("returns invalid transitions as _STATE with no kind, and raises on wrong arguments", function()
    local plain = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    assert.is_nil(plain:transaction_state())
    local ok, msg, code, kind = plain:init_transactions(1000)
    assert.is_nil(ok)
    assert.matches("transactional.id", msg)
    assert.are.equal("_STATE", code)
    assert.is_nil(kind)
    assert(plain:close())

    local producer = txn_producer(helper.topic("txn-state"))
    ok, msg, code, kind = producer:begin_transaction()
    assert.is_nil(ok)
    assert.matches("UNINITIALIZED", msg)
    assert.are.equal("_STATE", code)
    assert.is_nil(kind)
    assert(producer:init_transactions(30000))
    ok, _, code = producer:commit_transaction()
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    ok, _, code = producer:send("any-topic", "outside a transaction")
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    assert(producer:begin_transaction())
    assert.has_error(function() producer:send_offsets_to_transaction("x", "group") end)
    assert.has_error(function() producer:send_offsets_to_transaction({}, 42) end)
    assert.has_error(function() producer:send_offsets_to_transaction({}, { generation = 1 }) end)
    assert.has_error(function() producer:send_offsets_to_transaction({}, { group_id = "g", member_id = 1 }) end)
    assert.has_error(function() producer:commit_transaction("soon") end)
    -- an entry without an offset is named in the error
    ok, msg, code = producer:send_offsets_to_transaction({ { topic = "t", partition = 3 } }, "group")
    assert.is_nil(ok)
    assert.are.equal("_INVALID_ARG", code)
    assert.matches("t%-3", msg)
    assert(producer:send_offsets_to_transaction({}, "group")) -- nothing to commit: nothing sent
    assert(producer:abort_transaction(30000))
    assert(producer:close())
    assert(producer:close())
    assert.has_error(function() producer:begin_transaction() end, "producer is closed")
  end)

  it("examples/lua/transactional_copy.lua copies a topic exactly once", function()
    local input, output = new_topic("txn-ex-in", 2), new_topic("txn-ex-out", 2)
    local plain = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    for i = 1, 20 do assert(plain:send(input, "r" .. i, { partition = i % 2 })) end
    assert(plain:flush(30000))
    assert(plain:close())
    local group = helper.topic("txn-ex-group")
    local interp = ({ ["5.4"] = "lua5.4", ["5.3"] = "lua5.3", ["5.1"] = "lua5.1", jit = "luajit" })[helper.abi]
    -- runs until 20 records were copied or 20 s passed (bounded by the example)
    local cmd = string.format("KAFKA_BOOTSTRAP='%s' LUA_CPATH='%s;;' %s examples/lua/transactional_copy.lua %s %s %s 20 20 2>&1",
      bootstrap, helper.cpath, interp, input, output, group)
    local pipe = assert(io.popen(cmd))
    local out = pipe:read("*a")
    pipe:close()
    assert.matches("copied 20 records in %d+ transactions", out)
    local consumer = new_consumer({ ["group.id"] = group })
    local total = 0
    for _, e in ipairs(assert(consumer:committed({ { topic = input, partition = 0 }, { topic = input, partition = 1 } },
      10000))) do total = total + (e.offset or 0) end
    assert.are.equal(20, total, out)
    local ends = assert(consumer:end_offsets({ { topic = output, partition = 0 }, { topic = output, partition = 1 } }))
    assert(consumer:close())
    -- 20 records, plus one commit marker per partition and transaction
    assert.is_true(ends[1].offset + ends[2].offset >= 20)
    local reader = new_consumer({ ["isolation.level"] = "read_committed" })
    assert(reader:assign({ { topic = output, partition = 0 }, { topic = output, partition = 1 } }))
    local values = {}
    local deadline = os.time() + 20
    while #values < 20 and os.time() <= deadline do
      for _, r in ipairs(assert(reader:poll(200))) do values[#values + 1] = r.value end
    end
    assert(reader:close())
    table.sort(values)
    local want = {}
    for i = 1, 20 do want[i] = "R" .. i end
    table.sort(want)
    assert.are.same(want, values)
    admin:delete_topics({ input, output })
  end)
end)
