-- spec/batch_view_spec.lua: the raw-bytes forms of a poll_batch batch
-- against a real broker: batch:view() (LuaJIT's FFI: every field of
-- every record read in place, keys and values nil vs empty, headers,
-- offsets, partitions, timestamps), a view read after the next poll,
-- after its batch and the consumer were closed and collected, and after
-- view:close(); batch:value_lens() / batch:key_lens(),
-- batch:values_blob() / batch:keys_blob() and batch:offsets() /
-- batch:partitions() (every Lua); positions and commits advancing as
-- with poll; and the rule that the raw forms raise when a deserializer
-- or on_consume is set.
--
-- The view needs LuaJIT's ffi: on PUC Lua its tests are reported as
-- pending (named, not counted as passing) and the test that checks the
-- clear error view() raises there runs instead; on LuaJIT that one is
-- the pending one.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local has_ffi = pcall(require, "ffi")
local function needs_ffi(name, fn)
  if has_ffi then
    it(name, fn)
  else
    pending(name .. " [needs LuaJIT's ffi, running " .. _VERSION .. "]")
  end
end
local function needs_no_ffi(name, fn)
  if has_ffi then
    pending(name .. " [PUC Lua only, running " .. (jit and jit.version or _VERSION) .. "]")
  else
    it(name, fn)
  end
end

describe("kafka_native batch:view() and batch:*_lens()", function()
  local admin, topic, bootstrap, ts_base

  setup(function()
    bootstrap = helper.bootstrap()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
    ts_base = helper.timestamp_base()
    topic = helper.topic("view")
    local res = assert(admin:create_topics({ { name = topic, partitions = 2 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
    -- As batch_spec: 200 records over two partitions; record i has key
    -- "k<i>" (empty for i % 5 == 0, null for i % 5 == 1), value "v<i>"
    -- (empty for i % 10 == 3, null for i % 10 == 7), headers {i=<i>} and
    -- a null-valued header (none for i % 4 == 0), timestamp ts_base + i
    -- (recent: helper.timestamp_base says why).
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    for i = 1, 200 do
      local key, value = "k" .. i, "v" .. i
      if i % 5 == 0 then key = "" elseif i % 5 == 1 then key = nil end
      if i % 10 == 3 then value = "" elseif i % 10 == 7 then value = nil end
      local headers = i % 4 ~= 0 and { { "i", tostring(i) }, { "none" } } or nil
      assert(producer:send(topic, value, { key = key, partition = i % 2, timestamp = ts_base + i,
        headers = headers }))
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

  -- Where the consumer stands, for a failure message: each partition's
  -- position and log start offset (a log start at the log end means the
  -- broker deleted the records: helper.timestamp_base says when).
  local function where(consumer)
    local tps = { { topic = topic, partition = 0 }, { topic = topic, partition = 1 } }
    local starts = consumer:beginning_offsets(tps, 5000) or {}
    local s = {}
    for k, tp in ipairs(tps) do
      s[k] = string.format("partition %d: position %s, log start %s", tp.partition,
        tostring(consumer:position(topic, tp.partition, 5000)), tostring(starts[k] and starts[k].offset))
    end
    return table.concat(s, "; ")
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
    if seen < n then error(string.format("%d of %d records within 30 s (%s)", seen, n, where(consumer))) end
    return seen
  end

  -- The first non-empty batch (bounded).
  local function first_batch(consumer)
    local deadline = os.time() + 30
    while os.time() <= deadline do
      local b = assert(consumer:poll_batch(200))
      if #b > 0 then return b end
    end
    error("no records within 30 s (" .. where(consumer) .. ")")
  end

  local function expect_key(i, key)
    if i % 5 == 0 then assert.are.equal("", key)
    elseif i % 5 == 1 then assert.is_nil(key)
    else assert.are.equal("k" .. i, key) end
  end
  local function expect_value(i, value)
    if i % 10 == 3 then assert.are.equal("", value)
    elseif i % 10 == 7 then assert.is_nil(value)
    else assert.are.equal("v" .. i, value) end
  end
  local function expect_len(s, len) assert.are.equal(s and #s or -1, len) end

  -- Everything a view says about record j, as plain Lua values.
  local function snapshot(v, j)
    return { value = v:value(j), key = v:key(j), offset = v:offset(j), partition = v:partition(j),
      timestamp = v:timestamp(j), topic = v:topic(j), headers = v:headers(j) }
  end

  needs_ffi("reads every field in place as the batch does (nil vs empty, headers, offsets, timestamps)", function()
    local ffi = require("ffi")
    local consumer = new_consumer()
    local seen = {}
    local got = drain(consumer, 200, function(b)
      local v = b:view()
      assert.are.equal(#b, #v)
      assert.are.equal(#b, v.n)
      for j = 1, #v do
        local r = v.recs[j - 1] -- the C array is 0-based
        local i = tonumber(r.timestamp) - ts_base
        assert.is_nil(seen[i])
        seen[i] = true
        -- the struct fields
        assert.are.equal(b:offset(j), tonumber(r.offset))
        assert.are.equal(i % 2, r.partition)
        expect_len(b:value(j), r.value_len)
        expect_len(b:key(j), r.key_len)
        -- NULL only for null: an empty key or value is a valid pointer
        if r.value_len >= 0 then
          assert.is_true(r.value ~= nil)
          assert.are.equal(b:value(j), ffi.string(r.value, r.value_len))
        else assert.is_true(r.value == nil) end
        if r.key_len >= 0 then
          assert.is_true(r.key ~= nil)
          assert.are.equal(b:key(j), ffi.string(r.key, r.key_len))
        else assert.is_true(r.key == nil) end
        assert.are.equal(i % 4 ~= 0 and 2 or 0, r.header_count)
        assert.are.equal(0, r.timestamp_type)
        assert.are.equal(b:record(j).leader_epoch, r.leader_epoch)
        assert.are.equal(topic, ffi.string(v.topics[r.topic_idx]))
        assert.is_true(v[j] == r) -- v[j]: the same struct, 1-based and checked
        -- the methods (1-based)
        expect_value(i, v:value(j))
        expect_key(i, v:key(j))
        assert.are.equal(r.value_len, v:value_len(j))
        assert.are.equal(r.key_len, v:key_len(j))
        assert.are.equal(b:offset(j), v:offset(j))
        assert.are.equal(i % 2, v:partition(j))
        assert.are.equal(ts_base + i, v:timestamp(j))
        assert.are.equal("CreateTime", v:timestamp_type(j))
        assert.are.equal(r.leader_epoch, v:leader_epoch(j))
        assert.are.equal(topic, v:topic(j))
        assert.are.same(b:headers(j), v:headers(j))
        if i % 4 ~= 0 then
          assert.are.same({ { "i", tostring(i) }, { "none" } }, v:headers(j))
        else
          assert.are.same({}, v:headers(j))
        end
      end
      v:close()
    end)
    assert.are.equal(200, got)
    for i = 1, 200 do assert.is_true(seen[i]) end
    consumer:close()
  end)

  needs_ffi("advances positions and commits exactly as poll does", function()
    local group = helper.topic("view-group")
    local consumer = new_consumer({ ["group.id"] = group, ["enable.auto.commit"] = false })
    local last = {}
    local got = drain(consumer, 200, function(b)
      local v = b:view()
      for j = 0, v.n - 1 do
        local r = v.recs[j]
        last[r.partition] = tonumber(r.offset)
      end
    end)
    assert.are.equal(200, got)
    assert.are.equal(last[0] + 1, consumer:position(topic, 0))
    assert.are.equal(last[1] + 1, consumer:position(topic, 1))
    assert.are.equal(100, consumer:position(topic, 0))
    assert(consumer:commit({ sync = true }))
    local committed = assert(consumer:committed({ { topic = topic, partition = 0 }, { topic = topic, partition = 1 } }))
    assert.are.equal(100, committed[1].offset)
    assert.are.equal(100, committed[2].offset)
    consumer:close()
  end)

  needs_ffi("still reads the same bytes after the next poll, after its batch and the consumer are closed and collected", function()
    local consumer = new_consumer({ ["max.poll.records"] = 30 })
    local b1 = first_batch(consumer)
    local v1 = b1:view()
    local v1b = b1:view() -- a second view of the same batch
    local expected = {}
    for j = 1, #v1 do expected[j] = snapshot(v1, j) end
    -- a view whose batch is never referenced again
    local v2 = first_batch(consumer):view()
    local expected2 = {}
    for j = 1, #v2 do expected2[j] = snapshot(v2, j) end

    local function check()
      assert.are.equal(#expected, #v1)
      for j = 1, #v1 do assert.are.same(expected[j], snapshot(v1, j)) end
      assert.are.equal(#expected2, #v2)
      for j = 1, #v2 do assert.are.same(expected2[j], snapshot(v2, j)) end
    end
    -- the next polls
    for _ = 1, 3 do first_batch(consumer) end
    collectgarbage("collect")
    check()
    -- the batch closed (its reference dropped), other view closed
    b1:close()
    assert.has_error(function() b1:value(1) end, "batch is closed")
    v1b:close()
    b1 = nil
    collectgarbage("collect")
    collectgarbage("collect")
    check()
    -- the consumer closed and collected
    consumer:close()
    consumer = nil
    collectgarbage("collect")
    check()
    v1:close()
    v2:close()
  end)

  needs_ffi("frees through the collector: views dropped unclosed, before and after their batch", function()
    local consumer = new_consumer({ ["max.poll.records"] = 20 })
    local kept = first_batch(consumer)
    local expected = kept:value(1)
    for round = 1, 5 do
      local b = first_batch(consumer)
      for _ = 1, 3 do b:view() end          -- dropped at once, never closed
      local v = kept:view()                 -- more views of a batch still in use
      assert.are.equal(expected, v:value(1))
      if round % 2 == 0 then b:close() end  -- half the batches closed, half collected
      collectgarbage("collect")
    end
    collectgarbage("collect")
    assert.are.equal(expected, kept:value(1))
    assert.are.equal(expected, kept:view():value(1))
    kept:close()
    collectgarbage("collect")
    consumer:close()
  end)

  needs_ffi("after view:close(): length 0, a loop reads nothing, accessors raise", function()
    local consumer = new_consumer()
    local b = first_batch(consumer)
    local v = b:view()
    assert.is_true(#v > 0)
    v:close()
    assert.are.equal(0, #v)
    assert.are.equal(0, v.n)
    assert.is_true(v.recs == nil)
    local n = 0
    for _ = 0, v.n - 1 do n = n + 1 end
    assert.are.equal(0, n)
    assert.has_error(function() v:value(1) end, "view is closed")
    assert.has_error(function() return v[1] end, "view is closed")
    assert.has_error(function() v:headers(1) end, "view is closed")
    v:close() -- idempotent
    assert.are.equal("kafka_native.view (closed)", tostring(v))
    -- the batch is unaffected
    assert.is_true(#b > 0)
    assert.is_number(b:offset(1))
    consumer:close()
  end)

  needs_ffi("raises on bad indexes", function()
    local consumer = new_consumer()
    local v = first_batch(consumer):view()
    assert.has_error(function() v:value(0) end, "record index 0 out of range 1.." .. #v)
    assert.has_error(function() return v[#v + 1] end, "record index " .. (#v + 1) .. " out of range 1.." .. #v)
    assert.has_error(function() v:key(1.5) end)
    assert.has_error(function() v:offset("x") end)
    v:close()
    consumer:close()
  end)

  needs_no_ffi("view() raises naming LuaJIT's ffi and the PUC form", function()
    local consumer = new_consumer()
    local b = first_batch(consumer)
    local ok, err = pcall(b.view, b)
    assert.is_false(ok)
    assert.matches("needs LuaJIT's ffi", err, 1, true)
    assert.matches("value_lens", err, 1, true)
    consumer:close()
  end)

  it("value_lens() and key_lens() give each length, -1 for null, in reused tables", function()
    local consumer = new_consumer()
    local vlens, klens = { 99, 99, 99 }, {}
    local got = drain(consumer, 200, function(b)
      assert.are.equal(vlens, b:value_lens(vlens))
      assert.are.equal(klens, b:key_lens(klens))
      local fresh = b:value_lens()
      for j = 1, #b do
        local i = b:timestamp(j) - ts_base
        expect_value(i, b:value(j))
        expect_key(i, b:key(j))
        expect_len(b:value(j), vlens[j])
        expect_len(b:key(j), klens[j])
        assert.are.equal(vlens[j], fresh[j])
        assert.is_true(math.type == nil or math.type(vlens[j]) == "integer")
      end
    end)
    assert.are.equal(200, got)
    local b = assert(consumer:poll_batch(0))
    b:close()
    assert.has_error(function() b:value_lens() end, "batch is closed")
    assert.has_error(function() b.key_lens({}, {}) end)
    consumer:close()
  end)

  it("values_blob() and keys_blob() give every non-null value (key) end to end and the lengths, in reused tables", function()
    local consumer = new_consumer()
    local vlens, klens = { 99, 99, 99 }, {}
    local got = drain(consumer, 200, function(b)
      local values, vl = b:values_blob(vlens)
      local keys, kl = b:keys_blob(klens)
      assert.are.equal(vlens, vl)
      assert.are.equal(klens, kl)
      assert.is_string(values)
      local fresh_values, fresh = b:values_blob()
      assert.are.equal(values, fresh_values)
      local vpos, kpos, total = 1, 1, 0
      for j = 1, #b do
        local i = b:timestamp(j) - ts_base
        expect_len(b:value(j), vlens[j])
        expect_len(b:key(j), klens[j])
        assert.are.equal(vlens[j], fresh[j])
        -- record j's bytes start where record j - 1's ended (null ones take none)
        local value = vlens[j] >= 0 and values:sub(vpos, vpos + vlens[j] - 1) or nil
        local key = klens[j] >= 0 and keys:sub(kpos, kpos + klens[j] - 1) or nil
        expect_value(i, value)
        expect_key(i, key)
        if vlens[j] > 0 then vpos = vpos + vlens[j]; total = total + vlens[j] end
        if klens[j] > 0 then kpos = kpos + klens[j] end
      end
      assert.are.equal(#values, total)
      assert.are.equal(#values + 1, vpos)
      assert.are.equal(#keys + 1, kpos)
    end)
    assert.are.equal(200, got)
    local b = assert(consumer:poll_batch(0))
    b:close()
    assert.has_error(function() b:values_blob() end, "batch is closed")
    assert.has_error(function() b.keys_blob({}, {}) end)
    consumer:close()
  end)

  it("offsets() and partitions() give each record's as integers in reused tables, raw or not", function()
    for _, opts in ipairs({ {}, { value_deserializer = function(v) return v end } }) do
      local consumer = new_consumer(nil, opts)
      local offs, parts = { 99, 99, 99 }, {}
      local next_off = {}
      local got = drain(consumer, 200, function(b)
        assert.are.equal(offs, b:offsets(offs))
        assert.are.equal(parts, b:partitions(parts))
        local fresh = b:offsets()
        for j = 1, #b do
          assert.are.equal(b:offset(j), offs[j])
          assert.are.equal(b:partition(j), parts[j])
          assert.are.equal(offs[j], fresh[j])
          assert.is_true(math.type == nil or math.type(offs[j]) == "integer")
          -- each partition's offsets one after the other from 0
          assert.are.equal(next_off[parts[j]] or 0, offs[j])
          next_off[parts[j]] = offs[j] + 1
        end
      end)
      assert.are.equal(200, got)
      assert.are.same({ [0] = 100, [1] = 100 }, next_off)
      local b = assert(consumer:poll_batch(0))
      b:close()
      assert.has_error(function() b:offsets() end, "batch is closed")
      assert.has_error(function() b.partitions({}, {}) end)
      consumer:close()
    end
  end)

  it("raises on the raw forms when a deserializer or on_consume is set, naming the reason", function()
    local cases = {
      { value_deserializer = function(v) return v:upper() end },
      { key_deserializer = function(k) return k end },
      { on_consume = function(records) return records end },
    }
    for _, opts in ipairs(cases) do
      local consumer = new_consumer(nil, opts)
      local b = first_batch(consumer)
      for _, method in ipairs({ "view", "value_lens", "key_lens", "values_blob", "keys_blob" }) do
        local ok, err = pcall(b[method], b)
        assert.is_false(ok)
        assert.matches("batch:" .. method .. "() reads raw record bytes", err, 1, true)
        assert.matches("key_deserializer, value_deserializer or on_consume", err, 1, true)
      end
      -- the batch itself still reads what poll would return
      assert.is_number(b:offset(1))
      consumer:close()
    end
  end)
end)
