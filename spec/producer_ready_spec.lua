-- spec/producer_ready_spec.lua: what an OpenResty worker needs from a
-- producer that must never block: the readiness socket (a byte when
-- delivery reports are queued; silence while idle), outstanding(), the
-- first send to a topic with max.block.ms = 0 (the record waits for the
-- metadata instead of failing), failed-record reports that carry the
-- record (failed_records) and say whether it is retriable, and the
-- readiness socket's guards (private 0700 directory, SO_PEERCRED: a
-- connection from another process is refused). luasocket's Unix stream
-- client stands in for the cosocket.
local helper = require("spec.helper")
local kafka = require("kafka_native")
local unix = require("socket.unix")

-- Whether a path exists, without a shell (under the ASan build the
-- sanitizer is preloaded into every child, whose exit status then says
-- more about its own leaks than about the path).
local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() end
  return f ~= nil
end

describe("kafka_native.producer readiness and non-blocking sends", function()
  local admin, topic, bootstrap

  setup(function()
    bootstrap = helper.bootstrap()
    admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
    topic = helper.topic("pready")
    local res = assert(admin:create_topics({ { name = topic, partitions = 1 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[topic].error, res[topic].message)
    assert(admin:wait_for_topics({ topic }, 30000))
  end)

  teardown(function()
    admin:delete_topics({ topic })
    admin:close()
  end)

  it("signals queued delivery reports on the readiness socket, never while idle", function()
    local reports = {}
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap, ["linger.ms"] = 0 },
      { on_delivery = function(r) reports[#reports + 1] = r end }))
    local path = assert(producer:ready_listen())
    -- the socket sits alone in a fresh directory only this user can enter
    local dir = path:match("^(.*)/[^/]+$")
    local p = io.popen("env -u LD_PRELOAD stat -c %a '" .. dir .. "'")
    assert.are.equal("700", p:read("*l"))
    p:close()
    assert.is_true(exists(dir))
    local sock = unix.stream()
    assert(sock:connect(path))
    assert(producer:ready_accept())
    assert.is_false(exists(dir)) -- the socket's directory (and so its path) removed
    assert.are.equal(0, producer:outstanding())
    sock:settimeout(0.5)
    local b, err = sock:receive(1)
    assert.is_nil(b)
    assert.are.equal("timeout", err)
    for i = 1, 10 do assert(producer:send(topic, "v" .. i)) end
    assert.is_true(producer:outstanding() > 0)
    sock:settimeout(30)
    assert.are.equal("!", (assert(sock:receive(1))))
    -- drain as a cosocket loop would: poll(0), wait for the next byte
    local deadline = os.time() + 30
    while #reports < 10 and os.time() < deadline do
      assert(producer:poll(0))
      if #reports < 10 then sock:receive(1) end
    end
    assert.are.equal(10, #reports)
    assert.are.equal(0, producer:outstanding())
    for _, r in ipairs(reports) do assert.is_nil(r.error) end
    -- idle again: nothing arrives
    sock:settimeout(0.5)
    b, err = sock:receive(1)
    assert.is_nil(b)
    assert.are.equal("timeout", err)
    assert(producer:close())
    sock:close()
  end)

  it("refuses a readiness connection from another process", function()
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap }))
    local path = assert(producer:ready_listen())
    -- another process (same user) connects and holds the connection
    local child = io.popen("env -u LD_PRELOAD python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); "
      .. "s.connect(sys.argv[1]); print(\"connected\", flush=True); time.sleep(5)' '" .. path .. "'")
    assert.are.equal("connected", child:read("*l"))
    local ok, msg, code = producer:ready_accept()
    assert.is_nil(ok)
    assert.are.equal("_STATE", code)
    assert.matches("only this process", msg)
    -- the listener is still there for this process's own connection
    local sock = unix.stream()
    assert(sock:connect(path))
    assert(producer:ready_accept())
    assert(producer:close(0))
    sock:close()
    child:close()
  end)

  it("holds the first record to a new topic under max.block.ms = 0 until its metadata arrives", function()
    local fresh = helper.topic("pready-first")
    local res = assert(admin:create_topics({ { name = fresh, partitions = 2 } }, { timeout_ms = 30000 }))
    assert.is_nil(res[fresh].error, res[fresh].message)
    assert(admin:wait_for_topics({ fresh }, 30000))
    local reports = {}
    local producer = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap, ["max.block.ms"] = 0 },
      { on_delivery = function(r) reports[#reports + 1] = r end }))
    -- no metadata yet: send returns at once and the records wait
    for i = 1, 5 do assert(producer:send(fresh, "first" .. i, { key = "k" .. i, partition = i % 2 })) end
    assert.are.equal(5, producer:outstanding())
    assert(producer:flush(30000))
    assert.are.equal(5, #reports)
    for _, r in ipairs(reports) do
      assert.is_nil(r.error, r.message)
      assert.is_true(r.offset >= 0)
    end
    -- a topic that never appears (an invalid name: auto-creation cannot
    -- make it) fails at delivery.timeout.ms, as a report
    local gone = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap, ["max.block.ms"] = 0,
      ["delivery.timeout.ms"] = 1500, ["request.timeout.ms"] = 1000, ["linger.ms"] = 0 },
      { failed_records = true }))
    local seen
    assert(gone:send(helper.topic("pready-invalid") .. "!", "lost?", { key = "k", headers = { h = "x" },
      on_delivery = function(r) seen = r end }))
    assert(gone:flush(30000))
    assert.is_table(seen)
    assert.are.equal("_MSG_TIMED_OUT", seen.error)
    assert.matches("not present in metadata", seen.message)
    assert.is_true(seen.retriable)
    assert.are.equal("lost?", seen.value)
    assert.are.equal("k", seen.key)
    assert.are.same({ { "h", "x" } }, seen.headers)
    assert(gone:close())
    admin:delete_topics({ fresh })
    assert(producer:close())
  end)

  it("reports a failed record's bytes only with failed_records, and never on success", function()
    local plain = assert(kafka.producer({ ["bootstrap.servers"] = bootstrap, ["max.block.ms"] = 0,
      ["delivery.timeout.ms"] = 1500, ["request.timeout.ms"] = 1000, ["linger.ms"] = 0 }))
    local ok_report
    assert(plain:send(topic, "fine", { key = "k", on_delivery = function(r) ok_report = r end }))
    local failed
    assert(plain:send(helper.topic("pready-invalid") .. "!", "nowhere", { key = "k",
      on_delivery = function(r) failed = r end }))
    assert(plain:flush(30000))
    assert.is_nil(ok_report.error)
    assert.is_nil(ok_report.value)
    assert.is_nil(ok_report.retriable)
    assert.are.equal("_MSG_TIMED_OUT", failed.error)
    assert.is_true(failed.retriable)
    assert.is_nil(failed.value)
    assert.is_nil(failed.key)
    assert(plain:close())
  end)
end)
