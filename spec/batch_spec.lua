-- spec/batch_spec.lua: consumer:poll_batch against a real broker: the
-- table-free batch (#batch, value/key/offset/partition/topic/timestamp/
-- headers/record accessors, each(), values()/keys()) must return what
-- poll returns (nil vs empty keys and values, headers), deserializers
-- and on_consume must still apply (the batch then reads poll's record
-- tables), a raising deserializer rewinds like poll, and bad indexes or
-- a closed batch raise with a clear message.
local helper = require("spec.helper")
local kafka = require("kafka_native")

describe("kafka_native consumer:poll_batch", function()
  local admin, topic, bootstrap, ts_base

  setup(function()
    bootstrap = helper.bootstrap()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
    ts_base = helper.timestamp_base()
    topic = helper.topic("batch")
    local res = assert(admin:create_topics({ { name = topic, partitions = 2 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
    -- 200 records over two partitions: record i has key "k<i>" (empty for
    -- i % 5 == 0, null for i % 5 == 1), value "v<i>" (empty for
    -- i % 10 == 3, null for i % 10 == 7), headers {i=<i>} and a
    -- null-valued header, timestamp ts_base + i (recent:
    -- helper.timestamp_base says why).
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    for i = 1, 200 do
      local key, value = "k" .. i, "v" .. i
      if i % 5 == 0 then key = "" elseif i % 5 == 1 then key = nil end
      if i % 10 == 3 then value = "" elseif i % 10 == 7 then value = nil end
      assert(producer:send(topic, value, { key = key, partition = i % 2, timestamp = ts_base + i,
        headers = { { "i", tostring(i) }, { "none" } } }))
    end
    assert(producer:flush(30000))
    assert(producer:close())
  end)

  teardown(function()
    admin:delete_topics({ topic })
    admin:close()
  end)

  local function new_consumer(extra, opts)
    local conf = { ["bootstrap.servers"] = bootstrap, ["auto.offset.reset"] = "earliest" }
    for k, v in pairs(extra or {}) do conf[k] = v end
    local c = assert(kafka.consumer(conf, opts))
    assert(c:assign({ { topic = topic, partition = 0 }, { topic = topic, partition = 1 } }))
    return c
  end

  -- Calls fn(batch) for every batch until n records were seen (bounded).
  local function drain(consumer, n, fn)
    local seen = 0
    local deadline = os.time() + 30
    while seen < n and os.time() <= deadline do
      local batch = assert(consumer:poll_batch(200))
      fn(batch)
      seen = seen + #batch
    end
    return seen
  end

  local function expect_record(i, key, value)
    if i % 5 == 0 then assert.are.equal("", key)
    elseif i % 5 == 1 then assert.is_nil(key)
    else assert.are.equal("k" .. i, key) end
    if i % 10 == 3 then assert.are.equal("", value)
    elseif i % 10 == 7 then assert.is_nil(value)
    else assert.are.equal("v" .. i, value) end
  end

  it("reads every field by index without record tables, as poll does", function()
    local consumer = new_consumer()
    local seen = {}
    local got = drain(consumer, 200, function(b)
      for j = 1, #b do
        local i = b:timestamp(j) - ts_base
        assert.are.equal(topic, b:topic(j))
        assert.are.equal(i % 2, b:partition(j))
        expect_record(i, b:key(j), b:value(j))
        local h = b:headers(j)
        assert.are.equal("i", h[1][1])
        assert.are.equal(tostring(i), h[1][2])
        assert.are.equal("none", h[2][1])
        assert.is_nil(h[2][2])
        local r = b:record(j)
        assert.are.equal(b:offset(j), r.offset)
        assert.are.equal(b:value(j), r.value)
        assert.are.equal(b:key(j), r.key)
        assert.are.equal(topic, r.topic)
        assert.are.equal("CreateTime", r.timestamp_type)
        assert.is_nil(seen[i])
        seen[i] = b:offset(j)
      end
    end)
    assert.are.equal(200, got)
    for i = 1, 200 do assert.is_number(seen[i]) end
    assert.are.equal(100, consumer:position(topic, 0))
    assert.are.equal(100, consumer:position(topic, 1))
    consumer:close()
  end)

  it("iterates with each() and fills reused tables with values() and keys()", function()
    local consumer = new_consumer()
    local values, keys = { "stale" }, {}
    local n_each, n_fill = 0, 0
    drain(consumer, 200, function(b)
      local offsets = {}
      for j, v, k in b:each() do
        n_each = n_each + 1
        assert.are.equal(b:value(j), v)
        assert.are.equal(b:key(j), k)
        offsets[#offsets + 1] = j
      end
      assert.are.equal(#b, #offsets)
      assert.are.equal(values, b:values(values))
      assert.are.equal(keys, b:keys(keys))
      local fresh = b:values()
      for j = 1, #b do
        n_fill = n_fill + 1
        local i = b:timestamp(j) - ts_base
        expect_record(i, keys[j], values[j])
        assert.are.equal(values[j], fresh[j])
      end
    end)
    assert.are.equal(200, n_each)
    assert.are.equal(200, n_fill)
    consumer:close()
  end)

  it("applies deserializers and on_consume (reading poll's record tables)", function()
    local consumer = new_consumer({}, {
      value_deserializer = function(v) return v:upper() end,
      key_deserializer = function(k, record) return k .. "@" .. record.offset end,
      on_consume = function(records)
        local kept = {}
        for _, r in ipairs(records) do
          if r.value and r.value ~= "" then kept[#kept + 1] = r end
        end
        return kept
      end,
    })
    local total, upper = 0, 0
    local deadline = os.time() + 30
    while (consumer:position(topic, 0) < 100 or consumer:position(topic, 1) < 100) and os.time() <= deadline do
      local b = assert(consumer:poll_batch(200))
      local vals = b:values()
      for j, v, k in b:each() do
        total = total + 1
        assert.are.equal(v, vals[j])
        assert.truthy(v:match("^V%d+$"))
        upper = upper + 1
        if k then assert.are.equal("@" .. b:offset(j), k:match("@%d+$")) end
        assert.are.equal(b:record(j).value, v)
        assert.are.equal(b:headers(j)[1][1], "i")
      end
    end
    assert.are.equal(160, total) -- 200 less 20 empty and 20 null values
    assert.are.equal(160, upper)
    consumer:close()
  end)

  it("rewinds like poll when a deserializer raises", function()
    local fail = true
    local consumer = new_consumer({}, {
      value_deserializer = function(v)
        if fail then error("cannot decode " .. v) end
        return v
      end,
    })
    local b, msg, code
    local deadline = os.time() + 30
    repeat
      b, msg, code = consumer:poll_batch(200)
    until not b or os.time() > deadline
    assert.are.equal("_CALLBACK", code)
    assert.truthy(msg:find("cannot decode", 1, true))
    assert.are.equal(0, consumer:position(topic, 0) + consumer:position(topic, 1))
    fail = false
    assert.are.equal(200, drain(consumer, 200, function() end))
    consumer:close()
  end)

  it("raises on bad indexes, a closed batch and a closed consumer", function()
    local consumer = new_consumer()
    local b
    local deadline = os.time() + 30
    repeat b = assert(consumer:poll_batch(200)) until #b > 0 or os.time() > deadline
    assert.is_true(#b > 0)
    assert.has_error(function() b:value(0) end)
    assert.has_error(function() b:key(#b + 1) end)
    assert.has_error(function() b:offset("x") end)
    local ok, err = pcall(b.value, b, #b + 1)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("record index " .. (#b + 1) .. " out of range 1.." .. #b, 1, true))
    assert.has_error(function() b.value({}, 1) end)
    assert.truthy(tostring(b):find("records", 1, true))
    b:close()
    assert.are.equal(0, #b)
    ok, err = pcall(b.value, b, 1)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("batch is closed", 1, true))
    b:close() -- twice is fine
    assert.has_error(function() consumer:poll_batch("soon") end)
    consumer:close()
    assert.has_error(function() consumer:poll_batch(0) end, "consumer is closed")
  end)

  it("returns an empty batch after a timeout", function()
    local consumer = new_consumer()
    assert(consumer:seek(topic, 0, "end"))
    assert(consumer:seek(topic, 1, "end"))
    local b = assert(consumer:poll_batch(300))
    assert.are.equal(0, #b)
    local n = 0
    for _ in b:each() do n = n + 1 end
    assert.are.equal(0, n)
    consumer:close()
  end)
end)
