-- spec/producer_send_fast_spec.lua: producer:send(topic, value), the
-- call a request handler makes per record. On LuaJIT it reaches C
-- through the FFI (lk_send.lua) instead of the Lua C API; these cases
-- hold on every interpreter: every record delivered once and in order
-- per partition with one report each, the same results and errors as
-- the full send (options given), Lua hooks still run, and on LuaJIT a
-- loop of sends compiles to one trace that loops (no trace ends at the
-- call).
local helper = require("spec.helper")
local kafka = require("kafka_native")

-- Every result of f(...), as a table with n.
local function pack(...) return { n = select("#", ...), ... } end
local function results(f, ...) return pack(f(...)) end

describe("producer:send(topic, value)", function()
  local admin, topic

  setup(function()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
    topic = helper.topic("send-fast")
    local res = assert(admin:create_topics({ { name = topic, partitions = 3 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
  end)

  teardown(function()
    admin:delete_topics({ topic })
    admin:close()
  end)

  it("delivers every record once, in order per partition, one report each", function()
    local n = 3000
    local reports, seen = {}, {}
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap(), ["linger.ms"] = 5 },
      { on_delivery = function(r) reports[#reports + 1] = r end }))
    for i = 1, n do assert.is_true(producer:send(topic, "v" .. i)) end
    assert.is_true(producer:outstanding() > 0)
    assert(producer:flush(30000))
    assert.are.equal(0, producer:outstanding())
    assert.are.equal(n, #reports)
    local last = {}
    for _, r in ipairs(reports) do
      assert.is_nil(r.error, r.message)
      assert.are.equal(topic, r.topic)
      assert.is_nil(seen[r.partition .. ":" .. r.offset], "two reports for one offset")
      seen[r.partition .. ":" .. r.offset] = true
      assert.is_true(r.offset > (last[r.partition] or -1), "reports in offset order per partition")
      last[r.partition] = r.offset
    end
    assert(producer:close())

    -- On the topic: each value once, in send order within its partition.
    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = helper.bootstrap() }))
    assert(consumer:assign({ { topic = topic, partition = 0, offset = "beginning" },
      { topic = topic, partition = 1, offset = "beginning" }, { topic = topic, partition = 2, offset = "beginning" } }))
    local got, prev, count = {}, {}, 0
    local deadline = os.time() + 30
    while count < n and os.time() <= deadline do
      for _, r in ipairs(assert(consumer:poll(200))) do
        local i = tonumber(r.value:match("^v(%d+)$"))
        if i then
          assert.is_nil(got[i], "record v" .. i .. " on the topic twice")
          got[i] = true
          count = count + 1
          assert.is_true(i > (prev[r.partition] or 0), "records out of send order in partition " .. r.partition)
          prev[r.partition] = i
        end
      end
    end
    consumer:close()
    assert.are.equal(n, count)
  end)

  it("returns what the full send returns, errors included", function()
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }))
    -- an empty topic: refused by the library, the same triple both ways
    local fast = results(producer.send, producer, "", "v")
    local full = results(producer.send, producer, "", "v", {})
    assert.is_nil(fast[1])
    assert.are.equal("_INVALID_ARG", fast[3])
    assert.are.same(full, fast)
    -- not a producer: the argument error of the C send
    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = helper.bootstrap() }))
    assert.has_error(function() producer.send(consumer, topic, "v") end)
    assert.has_error(function() producer.send({}, topic, "v") end)
    consumer:close()
    local ok, err = pcall(producer.send, producer, topic, 42)
    assert.is_false(ok)
    assert.matches("value must be a string or nil", err)
    assert.has_error(function() producer:send(42, "v") end)
    assert(producer:close())
    assert.has_error(function() producer:send(topic, "v") end, "producer is closed")
  end)

  it("says _QUEUE_FULL when buffer.memory is full and max.block.ms is 0", function()
    local reports = 0
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap(), ["max.block.ms"] = 0,
      ["buffer.memory"] = 65536, ["linger.ms"] = 1000, ["batch.size"] = 1048576 },
      { on_delivery = function() reports = reports + 1 end }))
    assert(producer:send(topic, "first", {}))
    assert(producer:flush(30000)) -- metadata known: nothing waits for it below
    reports = 0
    local value = string.rep("x", 1000)
    local accepted, ok, msg, code = 0, nil, nil, nil
    for _ = 1, 1000 do
      ok, msg, code = producer:send(topic, value)
      if not ok then break end
      accepted = accepted + 1
    end
    assert.is_nil(ok)
    assert.are.equal("_QUEUE_FULL", code)
    assert.truthy(msg:find("buffer.memory", 1, true))
    assert.is_true(accepted > 0)
    assert(producer:flush(30000))
    assert.are.equal(accepted, reports) -- a refused record has no report
    assert(producer:close())
  end)

  it("still runs on_send, serializers and the Lua partitioner", function()
    local sent, parts = {}, 0
    local reports = {}
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap() }, {
      on_send = function(r) sent[#sent + 1] = r.value; return r end,
      value_serializer = function(v) return "s:" .. v end,
      partitioner = function(_, _, _, count) parts = parts + 1; return count - 1 end,
      on_delivery = function(r) reports[#reports + 1] = r end,
    }))
    for i = 1, 10 do assert(producer:send(topic, "v" .. i)) end
    assert(producer:flush(30000))
    assert.are.equal(10, #sent)
    assert.are.equal(10, parts)
    assert.are.equal(10, #reports)
    for _, r in ipairs(reports) do assert.are.equal(2, r.partition) end
    assert(producer:close())
  end)

  it("carries the failed record in its report under failed_records", function()
    local reports = {}
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap(),
      ["max.request.size"] = 4194304, ["linger.ms"] = 0 },
      { failed_records = true, on_delivery = function(r) reports[#reports + 1] = r end }))
    -- 2 MiB: within max.request.size, beyond the broker's message.max.bytes
    local big = string.rep("b", 2 * 1048576)
    assert(producer:send(topic, big))
    assert(producer:flush(30000))
    assert.are.equal(1, #reports)
    assert.is_not_nil(reports[1].error)
    assert.is_false(reports[1].retriable)
    assert.are.equal(big, reports[1].value)
    assert.is_nil(reports[1].key)
    assert(producer:close())
  end)

  if type(jit) == "table" and jit.status() then
    it("compiles a loop of sends to one trace that loops (LuaJIT)", function()
      local jutil = require("jit.util")
      local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap(), ["linger.ms"] = 5 },
        { on_delivery = function() end }))
      local function loop(p, t, v, n)
        for _ = 1, n do p:send(t, v) end
      end
      local traces = {}
      local function on_trace(what, tr, func)
        if what == "stop" and func == loop then traces[#traces + 1] = tr end
      end
      jit.flush()
      jit.attach(on_trace, "trace")
      loop(producer, topic, "v", 2000)
      jit.attach(on_trace)
      assert.is_true(#traces > 0, "the send loop was not compiled")
      local links = {}
      for _, tr in ipairs(traces) do links[#links + 1] = jutil.traceinfo(tr).linktype end
      assert.are.same("loop", links[1], "the loop's trace ends in " .. table.concat(links, ", "))
      assert(producer:flush(30000))
      assert(producer:close())
    end)
  end
end)
