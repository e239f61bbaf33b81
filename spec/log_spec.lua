-- spec/log_spec.lua: the `log` and `log_level` client options. Library
-- records (logged on the client's network thread) reach the Lua
-- function only on the caller's thread, from poll / flush / commit /
-- close and every admin call, as (level, message) with the client id
-- in front. Here the clients point at a loopback port nothing listens
-- on, so their failed connects are what they log.
local helper = require("spec.helper")
local kafka = require("kafka_native")

local dead = "127.0.0.1:1" -- connection refused at once
local levels = { ERROR = true, WARN = true, INFO = true, DEBUG = true }

local function collector()
  local got = {}
  return got, function(level, message) got[#got + 1] = { level = level, message = message } end
end

describe("kafka_native log option", function()
  it("hands a consumer's records to the log function from poll", function()
    local got, log = collector()
    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = dead, ["client.id"] = "spec-log-c" },
      { log = log, log_level = "debug" }))
    assert(consumer:assign({ { topic = "kn-spec-log", partition = 0 } }))
    for _ = 1, 50 do
      assert.is_table(assert(consumer:poll(200)))
      if #got > 0 then break end
    end
    assert.is_true(#got > 0, "no log record in 10 s")
    for _, r in ipairs(got) do
      assert.is_true(levels[r.level], r.level)
      assert.are.equal("spec-log-c: ", r.message:sub(1, 12))
    end
    assert(consumer:close())
  end)

  it("hands a producer's records to the log function from poll and flush", function()
    local got, log = collector()
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = dead, ["client.id"] = "spec-log-p" },
      { log = log, log_level = 3 }))
    for _ = 1, 50 do
      producer:poll(200)
      if #got > 0 then break end
    end
    assert.is_true(#got > 0, "no log record in 10 s")
    assert.matches("^spec%-log%-p: ", got[1].message)
    assert(producer:close(0))
  end)

  it("sees the group's and the producer's own lines, not just the wire's (issue #14 item 5)", function()
    -- group transitions are logged by the group module (debug)
    local got, log = collector()
    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = dead, ["client.id"] = "spec-log-g",
      ["group.id"] = "spec-log-group" }, { log = log, log_level = "debug" }))
    assert(consumer:subscribe({ "kn-spec-log" }))
    assert.is_table(assert(consumer:poll(100)))
    local seen = false
    for _, r in ipairs(got) do
      if r.message:find("spec-log-g: group spec-log-group", 1, true) and r.message:find("-> UNJOINED", 1, true) then
        seen = true
      end
    end
    assert.is_true(seen, "the group's transition did not reach the log function")
    assert(consumer:close(0))

    -- a producer's retry warnings (records for partition 2 of a topic
    -- deleted under it: UNKNOWN_TOPIC_OR_PARTITION, retried)
    local admin = assert(kafka.admin({ ["bootstrap.servers"] = helper.bootstrap() }))
    local stuck = helper.topic("log-stuck")
    assert(admin:create_topics({ { name = stuck, partitions = 3 } }, { timeout_ms = 30000 }))
    assert(admin:wait_for_topics({ stuck }, 30000))
    local pgot, plog = collector()
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = helper.bootstrap(), ["client.id"] = "spec-log-r",
      ["delivery.timeout.ms"] = 30000, ["request.timeout.ms"] = 10000 }, { log = plog, log_level = "warn" }))
    assert(producer:send(stuck, "first", { partition = 2 }))
    assert(producer:flush(30000))
    assert(admin:delete_topics({ stuck }))
    assert(producer:send(stuck, "again", { partition = 2 }))
    local retried = false
    for _ = 1, 50 do
      producer:poll(200)
      for _, r in ipairs(pgot) do
        if r.message:find("^spec%-log%-r: retrying a batch") then retried = true end
      end
      if retried then break end
    end
    assert.is_true(retried, "no retry warning reached the log function in 10 s")
    producer:close(0)
    admin:close()
  end)

  it("hands an admin client's records over after each call", function()
    local got, log = collector()
    local admin = assert(kafka.admin({ ["bootstrap.servers"] = dead, ["client.id"] = "spec-log-a" },
      { log = log, log_level = "info" }))
    local topics, _, code = admin:list_topics({ timeout_ms = 1500 })
    assert.is_nil(topics)
    assert.are.equal("_TIMED_OUT", code)
    assert.is_true(#got > 0, "the call returned without handing its records over")
    assert.matches("^spec%-log%-a: ", got[1].message)
    for _, r in ipairs(got) do assert.are_not.equal("DEBUG", r.level) end -- above log_level
    admin:close()
  end)

  it("keeps a call's result when the log function raises", function()
    local calls = 0
    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = dead },
      { log = function() calls = calls + 1; error("broken logger") end, log_level = "debug" }))
    assert(consumer:assign({ { topic = "kn-spec-log", partition = 0 } }))
    for _ = 1, 50 do
      local recs, msg = consumer:poll(200)
      assert.is_table(recs, msg) -- never nil, "_CALLBACK"
      if calls > 0 then break end
    end
    assert.is_true(calls > 0)
    assert(consumer:close())
  end)

  it("raises on a log option of the wrong type", function()
    assert.has_error(function() kafka.consumer({ ["bootstrap.servers"] = dead }, { log = 42 }) end)
    assert.has_error(function() kafka.producer({ ["bootstrap.servers"] = dead }, { log_level = "loud" }) end)
    assert.has_error(function() kafka.admin({ ["bootstrap.servers"] = dead }, { log_level = 7 }) end)
    assert.has_error(function() kafka.admin({ ["bootstrap.servers"] = dead }, "nope") end)
  end)

  it("uses the real broker with a log function without losing records", function()
    local bootstrap = helper.bootstrap()
    local got, log = collector()
    local admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }, { log = log }))
    assert.is_table(assert(admin:describe_cluster()))
    admin:close()
    admin:close()
    for _, r in ipairs(got) do assert.is_true(levels[r.level]) end
  end)
end)
