-- spec/ready_spec.lua: a consumer's readiness socket (ready_listen /
-- ready_accept), the thing an OpenResty cosocket waits on instead of
-- spinning on poll(0). Here luasocket's Unix stream client stands in
-- for the cosocket: it connects to the path the consumer listens on, a
-- byte arrives when fetched records land or wakeup() is called, and
-- nothing arrives while the consumer is idle (empty fetch answers do not
-- wake it).
local helper = require("spec.helper")
local kafka = require("kafka_native")
local unix = require("socket.unix")

-- io.open cannot open a socket file: ask test(1).
local function file_exists(path)
  local ok = os.execute("test -S '" .. path .. "'")
  return ok == true or ok == 0
end

describe("kafka_native.consumer readiness socket", function()
  local admin, topic, bootstrap

  setup(function()
    bootstrap = helper.bootstrap()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
    topic = helper.topic("ready")
    local res = assert(admin:create_topics({ { name = topic, partitions = 1 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
  end)

  teardown(function()
    admin:delete_topics({ topic })
    admin:close()
  end)

  -- A consumer at the end of the topic with its readiness socket
  -- connected; returns consumer, client socket.
  local function ready_consumer()
    local consumer = assert(kafka.consumer({
      ["bootstrap.servers"] = bootstrap,
      ["auto.offset.reset"] = "latest",
      ["fetch.max.wait.ms"] = 100, -- many empty fetch answers while idle
    }))
    assert(consumer:assign({ { topic = topic, partition = 0, offset = "end" } }))
    local path = assert(consumer:ready_listen())
    assert.is_true(file_exists(path))
    local sock = unix.stream()
    assert(sock:connect(path))
    assert(consumer:ready_accept())
    assert.is_false(file_exists(path)) -- unlinked once taken
    return consumer, sock
  end

  it("signals once records land, and stays silent while idle", function()
    local consumer, sock = ready_consumer()
    assert.are.equal(0, #assert(consumer:poll(0)))
    assert(consumer:position(topic, 0, 10000))
    -- Idle: several empty fetch answers (fetch.max.wait.ms = 100) come
    -- and go; none may wake the socket.
    sock:settimeout(0.6)
    local b, err = sock:receive(1)
    assert.is_nil(b)
    assert.are.equal("timeout", err)

    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    for round = 1, 3 do
      assert(producer:send(topic, "r" .. round, { partition = 0 }))
      assert(producer:flush(30000))
      sock:settimeout(30)
      assert.are.equal("!", assert(sock:receive(1)))
      -- The byte means poll(0) has something now, without waiting.
      local recs = assert(consumer:poll(0))
      assert.are.equal(1, #recs)
      assert.are.equal("r" .. round, recs[1].value)
      assert.are.equal(0, #assert(consumer:poll(0)))
    end
    assert(producer:close())
    assert(consumer:close())
    -- The consumer closed its end: the client reads end of stream.
    sock:settimeout(5)
    local _, cerr = sock:receive(1)
    assert.are.equal("closed", cerr)
    sock:close()
  end)

  it("signals wakeup(), so a loop waiting on the socket wakes and its poll(0) says _WAKEUP", function()
    local consumer, sock = ready_consumer()
    assert.are.equal(0, #assert(consumer:poll(0)))
    assert(consumer:position(topic, 0, 10000))
    consumer:wakeup()
    consumer:wakeup() -- one pending wakeup, one byte
    sock:settimeout(5)
    assert.are.equal("!", assert(sock:receive(1)))
    local recs, msg, code = consumer:poll(0)
    assert.is_nil(recs)
    assert.are.equal("_WAKEUP", code)
    assert.is_string(msg)
    assert.are.equal(0, #assert(consumer:poll(0))) -- the wakeup was used up
    sock:settimeout(0.3)
    local b, err = sock:receive(1)
    assert.is_nil(b)
    assert.are.equal("timeout", err)
    -- the poll re-armed the socket: the next wakeup signals again
    consumer:wakeup()
    sock:settimeout(5)
    assert.are.equal("!", assert(sock:receive(1)))
    _, _, code = consumer:poll(0)
    assert.are.equal("_WAKEUP", code)
    assert(consumer:close())
    sock:close()
    -- before ready_accept there is nobody to signal: wakeup only wakes poll
    local other = assert(kafka.consumer({ ["bootstrap.servers"] = bootstrap }))
    assert(other:ready_listen())
    other:wakeup()
    assert(other:assign({ { topic = topic, partition = 0, offset = "end" } }))
    _, _, code = other:poll(0)
    assert.are.equal("_WAKEUP", code)
    assert(other:close())
  end)

  it("signals a commit_async completion so its callback runs from the next poll", function()
    local consumer = assert(kafka.consumer({
      ["bootstrap.servers"] = bootstrap,
      ["group.id"] = helper.topic("ready-group"),
    }))
    assert(consumer:assign({ { topic = topic, partition = 0, offset = "end" } }))
    local path = assert(consumer:ready_listen())
    local sock = unix.stream()
    assert(sock:connect(path))
    assert(consumer:ready_accept())
    local seen
    assert(consumer:commit_async({ { topic = topic, partition = 0, offset = 0 } },
      function(offsets, err) seen = { offsets = offsets, err = err } end))
    -- Each byte is followed by poll(0)s until one returns nothing, as an
    -- event loop would; the commit's byte comes after at most a few
    -- fetch wake-ups.
    sock:settimeout(30)
    for _ = 1, 10 do
      if seen then break end
      assert.are.equal("!", assert(sock:receive(1)))
      repeat local recs = assert(consumer:poll(0)) until #recs == 0
    end
    assert.is_table(seen)
    assert.is_nil(seen.err)
    assert(consumer:close())
    sock:close()
  end)

  it("refuses a second listen and an accept without a connection", function()
    local consumer = assert(kafka.consumer({ ["bootstrap.servers"] = bootstrap }))
    local ok, msg, code = consumer:ready_accept()
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    assert.matches("ready_listen", msg)
    local path = assert(consumer:ready_listen())
    ok, msg, code = consumer:ready_accept()
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    assert.matches("connect to it", msg)
    ok, msg, code = consumer:ready_listen()
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    -- closing while listening removes the path
    assert.is_true(file_exists(path))
    assert(consumer:close())
    assert.is_false(file_exists(path))
    assert.has_error(function() consumer:ready_listen() end, "consumer is closed")
    local other = assert(kafka.consumer({ ["bootstrap.servers"] = bootstrap }))
    ok, msg, code = other:ready_listen("/nonexistent-dir-kn")
    assert.is_nil(ok)
    assert.are.equal("_TRANSPORT", code)
    assert.matches("nonexistent%-dir%-kn", msg)
    assert(other:close())
  end)
end)
