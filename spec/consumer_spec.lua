-- spec/consumer_spec.lua: kafka_native.consumer against a real broker,
-- with manual assignment (consumer groups are not implemented yet):
-- reading back what the producer wrote (nil vs empty keys and values,
-- headers), seek, pause/resume, commits with a group.id, the
-- on_consume interceptor, deserializer errors that keep the position,
-- and the handle's lifetime rules.
local helper = require("spec.helper")
local kafka = require("kafka_native")

-- Polls until n records arrived (or the deadline passed).
local function poll_n(consumer, n, deadline_ms)
  local out = {}
  local deadline = os.time() + math.ceil((deadline_ms or 30000) / 1000)
  while #out < n and os.time() <= deadline do
    local recs = assert(consumer:poll(200))
    for _, r in ipairs(recs) do out[#out + 1] = r end
  end
  return out
end

describe("kafka_native.consumer", function()
  local admin, topic, small
  local bootstrap

  setup(function()
    bootstrap = helper.bootstrap()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
    topic, small = helper.topic("consumer"), helper.topic("consumer-small")
    local res = assert(admin:create_topics({ { name = topic, partitions = 2 }, { name = small, partitions = 1 } },
      { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic, small }, 30000))

    -- 1,000 records over two partitions: record i has key "k<i>" (empty
    -- key for i % 5 == 0, null key for i % 5 == 1), value "v<i>" (empty
    -- for i % 10 == 3, null for i % 10 == 7), headers {i=<i>} plus a
    -- null-valued header.
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    for i = 1, 1000 do
      local key, value = "k" .. i, "v" .. i
      if i % 5 == 0 then key = "" elseif i % 5 == 1 then key = nil end
      if i % 10 == 3 then value = "" elseif i % 10 == 7 then value = nil end
      assert(producer:send(topic, value, { key = key, partition = i % 2,
        headers = { { "i", tostring(i) }, { "none" } } }))
    end
    for i = 1, 10 do assert(producer:send(small, "s" .. i, { key = tostring(i) })) end
    assert(producer:flush(30000))
    assert(producer:close())
  end)

  teardown(function()
    admin:delete_topics({ topic, small })
    admin:close()
  end)

  local function new_consumer(extra, opts)
    local conf = { ["bootstrap.servers"] = bootstrap, ["auto.offset.reset"] = "earliest" }
    for k, v in pairs(extra or {}) do conf[k] = v end
    return assert(kafka.consumer(conf, opts))
  end

  it("reads back 1,000 records with keys, values and headers", function()
    local consumer = new_consumer()
    assert(consumer:assign({ { topic = topic, partition = 0 }, { topic = topic, partition = 1 } }))
    local assigned = consumer:assignment()
    assert.are.equal(2, #assigned)
    local recs = poll_n(consumer, 1000)
    assert.are.equal(1000, #recs)
    local seen = {}
    for _, r in ipairs(recs) do
      assert.are.equal(topic, r.topic)
      assert.are.equal("CreateTime", r.timestamp_type)
      assert.is_true(r.timestamp > 0)
      assert.is_number(r.leader_epoch)
      local i = tonumber(r.headers[1][2])
      assert.are.equal("i", r.headers[1][1])
      assert.are.equal("none", r.headers[2][1])
      assert.is_nil(r.headers[2][2])
      assert.are.equal(i % 2, r.partition)
      if i % 5 == 0 then assert.are.equal("", r.key)
      elseif i % 5 == 1 then assert.is_nil(r.key)
      else assert.are.equal("k" .. i, r.key) end
      if i % 10 == 3 then assert.are.equal("", r.value)
      elseif i % 10 == 7 then assert.is_nil(r.value)
      else assert.are.equal("v" .. i, r.value) end
      assert.is_nil(seen[i])
      seen[i] = r.offset
    end
    assert.are.equal(500, consumer:position(topic, 0))
    assert.are.equal(500, consumer:position(topic, 1))
    local m = consumer:metrics()
    assert.are.equal(1000, m.records)
    -- no quota on this client: the broker never throttled (KIP-219)
    assert.are.equal(0, m.fetch_throttle_time_max_ms)
    assert.are.equal(0, m.fetch_throttle_time_avg_ms)
    assert(consumer:close())
  end)

  it("gives records without headers an empty, stable headers table, and says LogAppendTime", function()
    local lat, plain = helper.topic("consumer-logappend"), helper.topic("consumer-plain")
    local res = assert(admin:create_topics({ { name = plain, partitions = 1 }, { name = lat, partitions = 1,
      configs = { ["message.timestamp.type"] = "LogAppendTime" } } }, { timeout_ms = 30000 }))
    assert.is_nil(res[lat].error, res[lat].message)
    assert(admin:wait_for_topics({ lat, plain }, 30000))
    -- Recent create times (helper.timestamp_base says why); the
    -- LogAppendTime topic's is an hour old, so the broker's is told apart.
    local ts = helper.timestamp_base()
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    assert(producer:send(lat, "plain", { timestamp = ts - 3600000 }))
    assert(producer:send(plain, "no headers", { timestamp = ts }))
    assert(producer:flush(30000))
    assert(producer:close())
    local consumer = new_consumer()
    assert(consumer:assign({ { topic = lat, partition = 0 } }))
    local r = poll_n(consumer, 1)[1]
    assert.are.equal("LogAppendTime", r.timestamp_type)
    assert.is_true(r.timestamp >= ts) -- the broker's append time, not the hour-old create time
    assert(consumer:assign({ { topic = plain, partition = 0 } }))
    r = poll_n(consumer, 1)[1]
    assert.are.equal("no headers", r.value)
    assert.are.equal("CreateTime", r.timestamp_type)
    assert.are.equal(ts, r.timestamp)
    assert.are.same({}, r.headers)
    assert.are.equal(r.headers, r.headers) -- the same table on every read
    r.headers[1] = { "added", "later" }
    assert.are.equal("added", r.headers[1][1])
    assert(consumer:close())
    admin:delete_topics({ lat, plain })
  end)

  it("iterates with records() until a poll returns nothing", function()
    local consumer = new_consumer()
    assert(consumer:assign({ { topic = small, partition = 0, offset = "beginning" } }))
    local values = {}
    for record in consumer:records(2000) do values[#values + 1] = record.value end
    assert.are.equal(10, #values)
    assert.are.equal("s1", values[1])
    assert.are.equal("s10", values[10])
    consumer:close()
  end)

  it("seeks, pauses and resumes", function()
    local consumer = new_consumer()
    assert(consumer:assign({ { topic = topic, partition = 0, offset = 490 }, { topic = topic, partition = 1 } }))
    assert(consumer:pause({ { topic = topic, partition = 1 } }))
    local paused = consumer:paused()
    assert.are.equal(1, #paused)
    assert.are.equal(1, paused[1].partition)
    local recs = poll_n(consumer, 10, 10000)
    assert.are.equal(10, #recs)
    for _, r in ipairs(recs) do assert.are.equal(0, r.partition) end
    assert.are.equal(490, recs[1].offset)
    -- nothing more from partition 0, and partition 1 is paused
    assert.are.equal(0, #assert(consumer:poll(500)))
    assert(consumer:resume({ { topic = topic, partition = 1 } }))
    assert.are.equal(0, #consumer:paused())
    assert(consumer:seek(topic, 1, 495))
    recs = poll_n(consumer, 5, 10000)
    assert.are.equal(5, #recs)
    assert.are.equal(1, recs[1].partition)
    assert.are.equal(495, recs[1].offset)
    assert(consumer:seek_to_beginning({ { topic = topic, partition = 0 } }))
    assert.are.equal(0, consumer:position(topic, 0, 10000))
    assert(consumer:seek_to_end())
    assert.are.equal(500, consumer:position(topic, 1, 10000))
    local ends = assert(consumer:end_offsets({ { topic = topic, partition = 0 } }))
    assert.are.equal(500, ends[1].offset)
    -- seeking a partition that is not assigned is a runtime error
    local ok, msg, code = consumer:seek(small, 0, 0)
    assert.is_nil(ok)
    assert.is_string(msg)
    assert.are.equal("_STATE", code)
    consumer:close()
  end)

  it("finds offsets by timestamp, reports the lag of the last fetch and the read replica", function()
    local consumer = new_consumer({ ["max.poll.records"] = 3 })
    local ok, _, code = consumer:lag(small, 0)
    assert.is_nil(ok)
    assert.are.equal("_STATE", code) -- not assigned
    assert(consumer:assign({ { topic = small, partition = 0, offset = "beginning" } }))
    local all = poll_n(consumer, 10, 10000)
    assert.are.equal(10, #all)
    -- the earliest offset whose timestamp is at or after the one asked
    local ts = all[6].timestamp
    local function find(t)
      local res = assert(consumer:offsets_for_times({ { topic = small, partition = 0, timestamp = t } }, 10000))
      assert.is_nil(res[1].error)
      return res[1].offset
    end
    local o = find(ts)
    assert.is_true(o <= 5)
    assert.is_true(all[o + 1].timestamp >= ts)
    assert.is_true(o == 0 or all[o].timestamp < ts)
    assert.are.equal(0, find(0))
    assert.is_nil(find(ts + 3600 * 1000)) -- nothing that late
    assert.has_error(function() consumer:offsets_for_times({ { topic = small, partition = 0 } }) end)
    -- lag: log end of the last Fetch response minus the position
    assert(consumer:seek(small, 0, 0))
    local got = 0
    local deadline = os.time() + 10
    while got == 0 and os.time() <= deadline do got = #assert(consumer:poll(200)) end
    assert.are.equal(3, got)
    assert.are.equal(7, consumer:lag(small, 0))
    assert.has_error(function() consumer:lag(small, -1) end)
    -- read_replica (KIP-392): no client.rack here, so the leader serves
    assert.are.equal(-1, consumer:read_replica(small, 0))
    assert.are.equal(0, consumer:metrics().fetch_read_replica)
    local none, _, rcode = consumer:read_replica(small, 1)
    assert.is_nil(none)
    assert.are.equal("_STATE", rcode) -- not assigned
    assert(consumer:close())
  end)

  it("commits and reads committed offsets with a group.id", function()
    local group = helper.topic("group")
    local commits = {}
    local consumer = new_consumer({ ["group.id"] = group, ["enable.auto.commit"] = false },
      { on_commit = function(offsets, err) commits[#commits + 1] = { offsets = offsets, err = err } end })
    assert(consumer:assign({ { topic = small, partition = 0 } }))
    assert.are.equal(10, #poll_n(consumer, 10, 10000))
    assert(consumer:commit({ sync = true }))
    local committed = assert(consumer:committed({ { topic = small, partition = 0 } }))
    assert.are.equal(10, committed[1].offset)
    assert.are.equal(1, #commits)
    assert.is_nil(commits[1].err)
    assert.are.equal(10, commits[1].offsets[1].offset)

    assert(consumer:commit({ { topic = small, partition = 0, offset = 4, metadata = "four" } }))
    committed = assert(consumer:committed({ { topic = small, partition = 0 } }))
    assert.are.equal(4, committed[1].offset)
    assert.are.equal("four", committed[1].metadata)

    local async_result
    assert(consumer:commit_async({ { topic = small, partition = 0, offset = 7 } },
      function(offsets, err) async_result = { offsets = offsets, err = err } end))
    local deadline = os.time() + 15
    while not async_result and os.time() <= deadline do assert(consumer:poll(100)) end
    assert.is_table(async_result)
    assert.is_nil(async_result.err)
    assert.are.equal(7, async_result.offsets[1].offset)
    assert.are.equal(7, assert(consumer:committed({ { topic = small, partition = 0 } }))[1].offset)
    consumer:close()

    -- a new consumer of the group starts at the committed offset
    local again = new_consumer({ ["group.id"] = group, ["enable.auto.commit"] = false })
    assert(again:assign({ { topic = small, partition = 0 } }))
    local recs = poll_n(again, 3, 10000)
    assert.are.equal(7, recs[1].offset)
    again:close()

    -- without a group.id, commits are a runtime error
    local loner = new_consumer()
    assert(loner:assign({ { topic = small, partition = 0 } }))
    local ok, _, code = loner:commit()
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    loner:close()
  end)

  it("waits in close() for a commit_async and runs its callback exactly once", function()
    local group = helper.topic("group-close")
    local consumer = new_consumer({ ["group.id"] = group, ["enable.auto.commit"] = false })
    assert(consumer:assign({ { topic = small, partition = 0 } }))
    local calls = {}
    assert(consumer:commit_async({ { topic = small, partition = 0, offset = 6 } },
      function(offsets, err) calls[#calls + 1] = { offset = offsets[1].offset, err = err } end))
    assert(consumer:close())
    assert.are.equal(1, #calls)
    assert.is_nil(calls[1].err)
    assert.are.equal(6, calls[1].offset)
    local again = new_consumer({ ["group.id"] = group, ["enable.auto.commit"] = false })
    assert.are.equal(6, assert(again:committed({ { topic = small, partition = 0 } }))[1].offset)
    again:close()
  end)

  it("returns an error raised in a commit callback from poll, losing no record and no callback", function()
    local group = helper.topic("group-cb")
    local consumer = new_consumer({ ["group.id"] = group, ["enable.auto.commit"] = false })
    -- An explicit start: where a group member starts must not depend on
    -- whether its first OffsetFetch is answered before these commits.
    assert(consumer:assign({ { topic = small, partition = 0, offset = 0 } }))
    local order = {}
    for i = 1, 3 do
      assert(consumer:commit_async({ { topic = small, partition = 0, offset = i } }, function(offsets, err)
        order[#order + 1] = offsets[1].offset
        assert.is_nil(err)
        if i == 2 then error("commit callback failed") end
      end))
    end
    -- The commits may finish before, between or after the polls that
    -- return the records: poll until both the records and the three
    -- callbacks were seen (bounded), not just the records.
    local got, code, msg = {}, nil, nil
    local deadline = os.time() + 15
    while (#got < 10 or #order < 3) and os.time() <= deadline do
      local recs, m, c = consumer:poll(200)
      if recs then
        for _, r in ipairs(recs) do got[#got + 1] = r.offset end
      else
        assert.is_nil(code) -- fails once
        code, msg = c, m
      end
    end
    assert.are.equal("_CALLBACK", code)
    assert.truthy(msg:find("commit callback failed", 1, true))
    assert.are.same({ 1, 2, 3 }, order) -- call order; the one behind the error ran on a later poll
    assert.are.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, got)
    assert.are.equal(3, assert(consumer:committed({ { topic = small, partition = 0 } }))[1].offset)
    consumer:close()
  end)

  it("filters and rewrites records in on_consume", function()
    local consumer = new_consumer({}, {
      value_deserializer = function(v) return v:upper() end,
      on_consume = function(records)
        local kept = {}
        for _, r in ipairs(records) do
          if tonumber(r.key) % 2 == 0 then kept[#kept + 1] = r end
        end
        return kept
      end,
    })
    assert(consumer:assign({ { topic = small, partition = 0 } }))
    local values = {}
    local deadline = os.time() + 10
    while consumer:position(small, 0) < 10 and os.time() <= deadline do
      for _, r in ipairs(assert(consumer:poll(200))) do values[#values + 1] = r.value end
    end
    assert.are.same({ "S2", "S4", "S6", "S8", "S10" }, values)
    consumer:close()
  end)

  it("keeps the position when a deserializer raises", function()
    local fail_at = 3
    local consumer = new_consumer({ ["max.poll.records"] = 5 }, {
      key_deserializer = function(k, record)
        if record.offset == fail_at then error("cannot decode key " .. k) end
        return tonumber(k)
      end,
    })
    assert(consumer:assign({ { topic = small, partition = 0 } }))
    local got, err_msg, err_code = {}, nil, nil
    local deadline = os.time() + 10
    while #got < 10 and os.time() <= deadline do
      local recs, msg, code = consumer:poll(200)
      if recs then
        for _, r in ipairs(recs) do got[#got + 1] = r end
      else
        assert.is_nil(err_code) -- fails once
        err_msg, err_code = msg, code
        assert.are.equal(0, #got) -- nothing of that poll was returned
        assert.are.equal(0, consumer:position(small, 0)) -- rewound to its first record
        fail_at = nil
      end
    end
    assert.are.equal("_CALLBACK", err_code)
    assert.truthy(err_msg:find("cannot decode key 4", 1, true))
    assert.are.equal(10, #got)
    for i, r in ipairs(got) do
      assert.are.equal(i - 1, r.offset)
      assert.are.equal(i, r.key) -- deserialized to a number
    end
    consumer:close()
  end)

  it("raises on wrong arguments, returns errors for runtime failures", function()
    assert.has_error(function() kafka.consumer({}, { on_consume = 1 }) end)
    local c, _, code = kafka.consumer({ ["bootstrap.servers"] = bootstrap, ["no.such.key"] = 1 })
    assert.is_nil(c)
    assert.are.equal("_CONFIG", code)
    local consumer = new_consumer()
    assert.has_error(function() consumer:assign({ { topic = topic } }) end)
    assert.has_error(function() consumer:assign("x") end)
    assert.has_error(function() consumer:seek(topic, 0, -5) end)
    assert.has_error(function() consumer:poll("soon") end)
    local ok, _, code2 = consumer:assign({ { topic = topic, partition = 0 }, { topic = topic, partition = 0 } })
    assert.is_nil(ok)
    assert.are.equal("_INVALID_ARG", code2)
    consumer:close()
  end)

  it("wakes up a waiting poll", function()
    local consumer = new_consumer()
    assert(consumer:assign({ { topic = small, partition = 0, offset = "end" } }))
    consumer:wakeup()
    local recs, _, code = consumer:poll(5000)
    assert.is_nil(recs)
    assert.are.equal("_WAKEUP", code)
    consumer:close()
  end)

  it("is closed by close(), any number of times, and by the garbage collector", function()
    local consumer = new_consumer()
    assert(consumer:close())
    assert(consumer:close())
    assert.matches("closed", tostring(consumer))
    assert.has_error(function() consumer:poll(0) end, "consumer is closed")
    assert.has_error(function() consumer:assignment() end, "consumer is closed")
    local ran = false
    do
      local c = new_consumer({ ["group.id"] = helper.topic("gc") }, { on_commit = function() ran = true end })
      assert(c:assign({ { topic = small, partition = 0 } }))
      assert(c:commit_async(nil, function() ran = true end))
    end
    collectgarbage()
    collectgarbage()
    assert.is_false(ran) -- no Lua code runs during collection
  end)

  if helper.abi == "5.4" then
    it("is closed at the end of a <close> scope", function()
      local chunk = assert(load([[
        local kafka, conf = ...
        local outside
        do
          local consumer <close> = assert(kafka.consumer(conf))
          outside = consumer
        end
        return outside
      ]]))
      local c = chunk(kafka, { ["bootstrap.servers"] = bootstrap })
      assert.matches("closed", tostring(c))
    end)
  end
end)
