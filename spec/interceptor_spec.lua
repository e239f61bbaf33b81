-- spec/interceptor_spec.lua: producer interceptors (on_send may rewrite
-- a record before it is serialized and partitioned; on_acknowledgement
-- observes every delivery report before the record's own callback) and
-- a consumer callback calling back into its consumer.
local helper = require("spec.helper")
local kafka = require("kafka_native")

describe("kafka_native interceptors", function()
  local admin, topic, bootstrap

  setup(function()
    bootstrap = helper.bootstrap()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
    topic = helper.topic("interceptors")
    local res = assert(admin:create_topics({ { name = topic, partitions = 2 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
  end)

  teardown(function()
    admin:delete_topics({ topic })
    admin:close()
  end)

  local function read_all(partition, from, n)
    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = bootstrap }))
    assert(consumer:assign({ { topic = topic, partition = partition, offset = from } }))
    local out = {}
    for _ = 1, 100 do
      for _, r in ipairs(assert(consumer:poll(200))) do out[#out + 1] = r end
      if #out >= n then break end
    end
    assert(consumer:close())
    return out
  end

  local function end_offset(partition)
    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = bootstrap }))
    local res = assert(consumer:end_offsets({ { topic = topic, partition = partition } }, 10000))
    consumer:close()
    return res[1].offset
  end

  it("rewrites records in on_send before serializers and partitioner", function()
    local seen = {}
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }, {
      on_send = function(record)
        seen[#seen + 1] = record
        assert(type(record.value) == "table") -- not serialized yet
        record.value[#record.value + 1] = "intercepted"
        record.partition = 1
        record.headers = { { "via", "on_send" } }
        record.key = (record.key or "") .. "!"
        return record
      end,
      value_serializer = function(v) return table.concat(v, ",") end,
    }))
    local start = end_offset(1)
    for i = 1, 5 do
      assert(producer:send(topic, { "v" .. i }, { key = "k" .. i, partition = 0 }))
    end
    assert(producer:flush(30000))
    assert(producer:close())
    assert.are.equal(5, #seen)
    assert.are.equal(topic, seen[1].topic)
    assert.are.equal("k1!", seen[1].key)
    local recs = read_all(1, start, 5)
    assert.are.equal(5, #recs)
    for i, r in ipairs(recs) do
      assert.are.equal("v" .. i .. ",intercepted", r.value)
      assert.are.equal("k" .. i .. "!", r.key)
      assert.are.same({ { "via", "on_send" } }, r.headers)
    end
  end)

  it("sends nothing when on_send raises or returns something else than a record", function()
    local mode = "raise"
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }, {
      on_send = function(record)
        if mode == "raise" then error("on_send refused " .. record.value) end
        if mode == "string" then return "nope" end
        if mode == "no topic" then record.topic = nil end
        return record
      end,
    }))
    local start = end_offset(0)
    local ok, msg, code = producer:send(topic, "x", { partition = 0 })
    assert.is_nil(ok)
    assert.are.equal("_CALLBACK", code)
    assert.matches("on_send refused x", msg)
    mode = "string"
    ok, msg, code = producer:send(topic, "x", { partition = 0 })
    assert.is_nil(ok)
    assert.are.equal("_CALLBACK", code)
    assert.matches("not a record table", msg)
    mode = "no topic"
    ok, msg, code = producer:send(topic, "x", { partition = 0 })
    assert.is_nil(ok)
    assert.are.equal("_CALLBACK", code)
    mode = "pass"
    assert(producer:send(topic, "sent", { partition = 0 }))
    assert(producer:flush(30000))
    assert(producer:close())
    assert.are.equal(start + 1, end_offset(0))
    assert.are.equal("sent", read_all(0, start, 1)[1].value)
  end)

  it("observes every delivery report in on_acknowledgement, before the record's callback", function()
    local order, acks = {}, {}
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }, {
      on_acknowledgement = function(report)
        acks[#acks + 1] = report
        order[#order + 1] = "ack"
      end,
      on_delivery = function() order[#order + 1] = "delivery" end,
    }))
    for i = 1, 10 do assert(producer:send(topic, "a" .. i, { partition = i % 2 })) end
    -- a per-record callback too
    local own
    assert(producer:send(topic, "own", { partition = 0, on_delivery = function(r)
      own = r
      order[#order + 1] = "delivery"
    end }))
    assert(producer:flush(30000))
    assert.are.equal(11, #acks)
    for _, r in ipairs(acks) do
      assert.is_nil(r.error)
      assert.is_true(r.offset >= 0)
    end
    local same = false -- the interceptor saw the very table on_delivery got
    for _, r in ipairs(acks) do same = same or rawequal(r, own) end
    assert.is_true(same)
    assert.are.equal(22, #order)
    for i = 1, 22, 2 do
      assert.are.equal("ack", order[i])
      assert.are.equal("delivery", order[i + 1])
    end
    assert(producer:close())
  end)

  it("returns an on_acknowledgement error from flush but still runs the delivery callbacks", function()
    local delivered, calls = 0, 0
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }, {
      on_acknowledgement = function()
        calls = calls + 1
        if calls == 2 then error("ack interceptor broke") end
      end,
      on_delivery = function() delivered = delivered + 1 end,
    }))
    for i = 1, 4 do assert(producer:send(topic, "b" .. i, { partition = 0 })) end
    local ok, msg, code = producer:flush(30000)
    assert.is_nil(ok)
    assert.are.equal("_CALLBACK", code)
    assert.matches("ack interceptor broke", msg)
    assert.are.equal(2, delivered) -- the failing report's callback ran too
    assert.are.equal(2, producer:poll(0))
    assert.are.equal(4, delivered)
    assert.are.equal(4, calls)
    assert(producer:close())
  end)

  it("lets on_consume call back into its consumer (commit inside the interceptor)", function()
    local group = helper.topic("interceptor-group")
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    local start = end_offset(1)
    for i = 1, 3 do assert(producer:send(topic, "c" .. i, { partition = 1 })) end
    assert(producer:flush(30000))
    assert(producer:close())
    local consumer
    local committed_in_cb
    consumer = assert(kafka.consumer({ ["bootstrap.servers"] = bootstrap, ["group.id"] = group }, {
      on_consume = function(records)
        if #records > 0 then
          local last = records[#records]
          committed_in_cb = assert(consumer:commit({ { topic = last.topic, partition = last.partition,
            offset = last.offset + 1 } }))
          assert.are.equal(last.offset + 1, consumer:position(last.topic, last.partition))
        end
        return records
      end,
    }))
    assert(consumer:assign({ { topic = topic, partition = 1, offset = start } }))
    local got = 0
    for _ = 1, 100 do
      got = got + #assert(consumer:poll(200))
      if got >= 3 then break end
    end
    assert.are.equal(3, got)
    assert.is_true(committed_in_cb)
    local c = assert(consumer:committed({ { topic = topic, partition = 1 } }, 10000))
    assert.are.equal(start + 3, c[1].offset)
    assert(consumer:close())
  end)
end)
