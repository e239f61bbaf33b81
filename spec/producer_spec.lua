-- spec/producer_spec.lua: kafka_native.producer against a real broker:
-- sending with keys, headers and nil values, delivery reports served by
-- poll/flush, errors raised in callbacks, argument errors, and the
-- handle's lifetime rules.
local helper = require("spec.helper")
local kafka = require("kafka_native")

describe("kafka_native.producer", function()
  local admin, topic

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
    topic = helper.topic("producer")
    local res = assert(admin:create_topics({ { name = topic, partitions = 3 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
  end)

  teardown(function()
    admin:delete_topics({ topic })
    admin:close()
  end)

  it("delivers 1,000 records with keys, headers and nil values", function()
    local reports = {}
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap(), ["linger.ms"] = 5 },
      { on_delivery = function(report) reports[#reports + 1] = report end }))
    for i = 1, 1000 do
      local value = (i % 10 == 0) and nil or ("value-" .. i)
      assert(producer:send(topic, value, {
        key = "key-" .. (i % 7),
        headers = { { "seq", tostring(i) }, { "empty", "" }, { "null" } },
      }))
    end
    assert(producer:flush(30000))
    assert.are.equal(1000, #reports)
    for _, r in ipairs(reports) do
      assert.is_nil(r.error, r.message)
      assert.are.equal(topic, r.topic)
      assert.is_true(r.partition >= 0 and r.partition < 3)
      assert.is_true(r.offset >= 0)
      assert.is_true(r.timestamp > 0)
    end
    local m = producer:metrics()
    assert.are.equal(1000, m.records_sent)
    assert.are.equal(0, m.outstanding)
    assert(producer:close())
  end)

  it("runs a per-record on_delivery instead of the producer's", function()
    local default_calls, own = 0, nil
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() },
      { on_delivery = function() default_calls = default_calls + 1 end }))
    assert(producer:send(topic, "v", { partition = 1, timestamp = 1700000000000,
      headers = { trace = "abc" }, on_delivery = function(r) own = r end }))
    assert(producer:flush(30000))
    assert.are.equal(0, default_calls)
    assert.are.equal(1, own.partition)
    assert.are.equal(1700000000000, own.timestamp)
    producer:close()
  end)

  it("returns an error raised in on_delivery from poll and stays usable", function()
    local seen = 0
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }, {
      on_delivery = function(r)
        seen = seen + 1
        if seen == 2 then error("boom in callback") end
      end,
    }))
    for i = 1, 5 do assert(producer:send(topic, "cb-" .. i, { partition = 0 })) end
    -- flush waits for all 5 reports; the second callback raises.
    local ok, msg, code = producer:flush(30000)
    assert.is_nil(ok)
    assert.are.equal("_CALLBACK", code)
    assert.truthy(msg:find("boom in callback", 1, true))
    assert.truthy(msg:find("traceback", 1, true))
    assert.are.equal(2, seen)
    -- the three reports behind it are not lost: the next poll serves them
    assert.are.equal(3, assert(producer:poll(0)))
    assert.are.equal(5, seen)
    -- and the producer still sends
    assert(producer:send(topic, "after"))
    assert(producer:flush(30000))
    assert.are.equal(6, seen)
    assert(producer:close())
  end)

  it("serializes keys and values with the producer's serializers", function()
    local report
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }, {
      key_serializer = function(k) return "key:" .. tostring(k) end,
      value_serializer = function(v, t)
        assert(t == topic)
        if v == "bad" then error("cannot serialize") end
        if v == "wrong" then return {} end
        return table.concat(v, ",")
      end,
      on_delivery = function(r) report = r end,
    }))
    assert(producer:send(topic, { 1, 2, 3 }, { key = 42, partition = 2 }))
    assert(producer:send(topic, nil, { key = 7, partition = 2 })) -- nil is not serialized
    local ok, msg, code = producer:send(topic, "bad")
    assert.is_nil(ok)
    assert.are.equal("_CALLBACK", code)
    assert.truthy(msg:find("cannot serialize", 1, true))
    ok, msg, code = producer:send(topic, "wrong")
    assert.is_nil(ok)
    assert.are.equal("_CALLBACK", code)
    assert.truthy(msg:find("not a string", 1, true))
    assert(producer:flush(30000))
    assert.is_nil(report.error)
    local fd = producer:fd()
    assert.is_true(fd == nil or (math.type and math.type(fd) == "integer") or type(fd) == "number")
    assert.are.equal(2, producer:metrics().records_sent)
    producer:close()

    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = helper.bootstrap() }))
    assert(consumer:assign({ { topic = topic, partition = 2, offset = report.offset - 1 } }))
    local got = {}
    local deadline = os.time() + 10
    while #got < 2 and os.time() <= deadline do
      for _, r in ipairs(assert(consumer:poll(200))) do got[#got + 1] = r end
    end
    assert.are.equal("key:42", got[1].key)
    assert.are.equal("1,2,3", got[1].value)
    assert.are.equal("key:7", got[2].key)
    assert.is_nil(got[2].value)
    consumer:close()
  end)

  it("chooses partitions with a Lua partitioner, after the serializers", function()
    local calls = {}
    local fail_on
    local producer
    producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }, {
      value_serializer = function(v) return "s:" .. v end,
      partitioner = function(t, key, value, count)
        calls[#calls + 1] = { topic = t, key = key, value = value, count = count }
        if value == "s:" .. tostring(fail_on) then error("no partition for " .. value) end
        if value == "s:reenter" then producer:flush(0) end -- the producer refuses re-entry
        if value == "s:wrong" then return "two" end
        if value == "s:far" then return 7 end
        return key and tonumber(key) % count or count - 1
      end,
    }))
    local reports = {}
    local function rec(name) return function(r) reports[name] = r end end
    assert(producer:send(topic, "a", { key = "4", on_delivery = rec("a") }))  -- 4 % 3
    assert(producer:send(topic, "b", { on_delivery = rec("b") }))             -- null key: count - 1
    assert(producer:send(topic, "c", { key = "4", partition = 0, on_delivery = rec("c") })) -- explicit: not asked
    assert(producer:flush(30000))
    assert.are.same({ 1, 2, 0 }, { reports.a.partition, reports.b.partition, reports.c.partition })
    assert.are.equal(2, #calls)
    assert.are.same({ topic = topic, key = "4", value = "s:a", count = 3 }, calls[1])
    assert.is_nil(calls[2].key)
    -- a partitioner that raises, returns a non-number or re-enters: the
    -- record is refused with _CALLBACK; out of range: _INVALID_ARG
    fail_on = "x"
    local ok, msg, code = producer:send(topic, "x", { on_delivery = rec("x") })
    assert.is_nil(ok)
    assert.are.equal("_CALLBACK", code)
    assert.matches("no partition for s:x", msg)
    ok, msg, code = producer:send(topic, "wrong")
    assert.are.equal("_CALLBACK", code)
    assert.matches("partitioner returned a string", msg)
    ok, msg, code = producer:send(topic, "reenter")
    assert.are.equal("_CALLBACK", code)
    assert.matches("cannot run inside its partitioner", msg)
    ok, msg, code = producer:send(topic, "far")
    assert.are.equal("_INVALID_ARG", code)
    assert.matches("partition 7", msg)
    assert(producer:send(topic, "d", { key = "5", on_delivery = rec("d") }))  -- still usable
    assert(producer:flush(30000))
    assert.is_nil(reports.x) -- refused records get no report
    assert.is_nil(reports.d.error)
    assert.are.equal(2, reports.d.partition)
    assert(producer:close())
    assert.has_error(function() kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }, { partitioner = 1 }) end)
  end)

  it("lets a callback call back into its producer", function()
    local producer
    local reports = {}
    producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }, {
      on_delivery = function(r)
        reports[#reports + 1] = r
        if #reports == 1 then
          assert(producer:send(topic, "from the callback"))
          assert.is_number(producer:poll(0))
        end
      end,
    }))
    assert(producer:send(topic, "first"))
    assert(producer:flush(30000))
    assert(producer:flush(30000))
    assert.are.equal(2, #reports)
    assert(producer:close())
  end)

  it("returns nil, message, code for runtime errors and raises on wrong arguments", function()
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }))
    local ok, msg, code = producer:send(topic, "x", { partition = 99 })
    assert.is_nil(ok)
    assert.is_string(msg)
    assert.are.equal("_INVALID_ARG", code)
    assert.has_error(function() producer:send(nil, "x") end)
    assert.has_error(function() producer:send(topic, {}) end)
    assert.has_error(function() producer:send(topic, "x", { key = 5 }) end)
    assert.has_error(function() producer:send(topic, "x", { headers = { 1, 2 } }) end)
    assert.has_error(function() producer:send(topic, "x", { on_delivery = "no" }) end)
    assert.has_error(function() kafka.producer({}, { on_delivery = 1 }) end)
    assert.has_error(function() kafka.producer({}, { value_serializer = "json" }) end)
    local p2, msg2, code2 = kafka.producer({ ["bootstrap.server"] = "x" })
    assert.is_nil(p2)
    assert.are.equal("_CONFIG", code2)
    assert.is_string(msg2)
    producer:close()
  end)

  it("is closed by close(), any number of times", function()
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }))
    assert(producer:send(topic, "last"))
    assert(producer:close(10000))
    assert(producer:close())
    assert.matches("closed", tostring(producer))
    assert.has_error(function() producer:send(topic, "x") end, "producer is closed")
    assert.has_error(function() producer:poll(0) end, "producer is closed")
  end)

  it("is closed by the garbage collector without running Lua", function()
    local called = false
    do
      local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() },
        { on_delivery = function() called = true end }))
      assert(producer:send(topic, "gc"))
    end
    collectgarbage()
    collectgarbage()
    assert.is_false(called)
  end)

  it("is collected without waiting on the network: undeliverable records fail at once", function()
    -- Records for partition 2 of a topic deleted after the producer
    -- learned of it: the broker answers UNKNOWN_TOPIC_OR_PARTITION
    -- (retriable; a topic auto-created again has one partition), so
    -- they stay outstanding until delivery.timeout.ms.
    local stuck = helper.topic("producer-stuck")
    local res = assert(admin:create_topics({ { name = stuck, partitions = 3 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[stuck].error, res[stuck].message)
    assert(admin:wait_for_topics({ stuck }, 30000))
    do
      local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap(),
        ["delivery.timeout.ms"] = 30000, ["request.timeout.ms"] = 10000 }, { log_level = "error" }))
      assert(producer:send(stuck, "first", { partition = 2 }))
      assert(producer:flush(30000))
      assert(admin:delete_topics({ stuck }))
      -- The deletion is applied by the broker a moment later: until the
      -- topic is gone, a send to partition 2 could still succeed.
      helper.wait_for(function()
        for _, t in ipairs(assert(admin:list_topics())) do
          if t.name == stuck then return false end
        end
        return true
      end, function(gone) return gone end)
      for i = 1, 10 do assert(producer:send(stuck, "r" .. i, { partition = 2 })) end
      local ok, _, code = producer:flush(500)
      assert.is_nil(ok)
      assert.are.equal("_TIMED_OUT", code)
    end
    local t0 = os.time()
    collectgarbage()
    collectgarbage()
    -- generous: a finalizer never waits on the network (it used to
    -- flush for up to delivery.timeout.ms, 30 s here)
    assert.is_true(os.time() - t0 <= 5)
    admin:delete_topics({ stuck })
  end)

  if helper.abi == "5.4" then
    it("is closed at the end of a <close> scope, serving its reports", function()
      local chunk = assert(load([[
        local kafka, bootstrap, topic = ...
        local delivered
        do
          local producer <close> = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap },
            { on_delivery = function(r) delivered = r end }))
          assert(producer:send(topic, "scoped"))
        end
        return delivered
      ]]))
      local delivered = chunk(kafka, helper.bootstrap(), topic)
      assert.is_table(delivered)
      assert.is_nil(delivered.error)
    end)
  end
end)
