-- spec/close_bounded_spec.lua: every Lua client closed while its
-- brokers are unreachable returns within its timeout and leaves no
-- thread or file descriptor behind (issue #19, "bounded close"). The
-- dead brokers come from the kn_silent_cluster program
-- (tests/c/support/silent): "refused" (nothing listens), "silent" (a
-- listener that never answers) and "half" (a node that answers
-- metadata and names a silent node as every leader, coordinator and
-- the controller). The C side, with a real broker of its own stopped
-- under connected clients, is tests/c/it_close_bounded.c.
local helper = require("spec.helper")
local kafka = require("kafka_native")

-- close's timeout, and what a loaded machine may add to it
local CLOSE_MS, SLACK_MS = 1500, 750

-- Milliseconds, read inside this process (lua-socket, a test
-- dependency: tools/deps/debian-packages.txt). Not `date` through
-- io.popen: a child's start-up (slow under ASan's LD_PRELOAD) would be
-- counted in the close it measures.
local socket = require("socket")
local function now_ms() return math.floor(socket.gettime() * 1000) end

local pid = assert(io.open("/proc/self/stat")):read("*l"):match("^(%d+)")

local function count(what)
  local p = assert(io.popen("ls /proc/" .. pid .. "/" .. what .. " | wc -l"))
  local n = tonumber(p:read("*l"))
  p:close()
  return n
end

-- A full collection first: a client an earlier spec dropped but the
-- collector had not finalized yet would otherwise close its sockets in
-- the middle of a case (seen under Lua 5.1: fds 10 before, 9 after).
local function resources()
  collectgarbage("collect")
  collectgarbage("collect")
  return { threads = count("task"), fds = count("fd") }
end

-- back to at most the counts taken before the client was made (bounded
-- wait): what the client made is gone. At most, not exactly: something
-- of an earlier spec may let go of an fd during a case (seen under
-- LuaJIT in CI: fds 9 before, 8 after), and fewer is no leak.
local function assert_back(before, what)
  local now = resources()
  for _ = 1, 50 do
    if now.threads <= before.threads and now.fds <= before.fds then break end
    os.execute("sleep 0.1")
    now = resources()
  end
  assert.is_true(now.threads <= before.threads,
    what .. ": threads " .. now.threads .. " after, " .. before.threads .. " before")
  assert.is_true(now.fds <= before.fds, what .. ": fds " .. now.fds .. " after, " .. before.fds .. " before")
end

local function assert_bounded(t0, timeout, what)
  local took = now_ms() - t0
  assert.is_true(took <= timeout + SLACK_MS, what .. ": close took " .. took .. " ms (timeout " .. timeout .. ")")
end

describe("closing a client whose brokers are unreachable", function()
  local proc, ports, helper_pid

  setup(function()
    local exe = os.getenv("KN_SILENT_CLUSTER") or "build/tests/c/kn_silent_cluster"
    proc = assert(io.popen(exe))
    local line = assert(proc:read("*l"), "no answer from " .. exe)
    ports = {
      refused = tonumber(line:match("refused=(%d+)")),
      silent = tonumber(line:match("silent=(%d+)")),
      half = tonumber(line:match("half=(%d+)")),
    }
    helper_pid = assert(line:match("pid=(%d+)"))
  end)

  teardown(function()
    os.execute("kill " .. helper_pid)
    proc:close()
  end)

  local function conf(where, extra)
    local c = {
      ["bootstrap.servers"] = "127.0.0.1:" .. ports[where],
      ["reconnect.backoff.ms"] = "20",
      ["reconnect.backoff.max.ms"] = "200",
    }
    for k, v in pairs(extra or {}) do c[k] = v end
    return c
  end

  for _, where in ipairs({ "refused", "silent", "half" }) do
    it("a producer with records accepted (" .. where .. ")", function()
      local before = resources()
      local reports = 0
      local p = assert(kafka.producer(conf(where, { ["max.block.ms"] = "500" }),
        { on_delivery = function() reports = reports + 1 end }))
      local accepted = 0
      -- refused / silent: no metadata, a send gives up after max.block.ms
      -- (one is enough); half: accepted, and the leader never answers
      local n = where == "half" and 5 or 1
      for i = 1, n do
        if p:send("t", "v" .. i) then accepted = accepted + 1 end
      end
      if where == "half" then assert.are.equal(5, accepted) end
      local t0 = now_ms()
      p:close(CLOSE_MS)
      assert_bounded(t0, CLOSE_MS, "producer")
      assert.are.equal(accepted, reports) -- every report ran, once
      assert_back(before, "producer")
    end)

    it("a transactional producer (" .. where .. ")", function()
      local before = resources()
      local p = assert(kafka.producer(conf(where, { ["max.block.ms"] = "500", ["transactional.id"] = "close-bounded" })))
      assert.is_nil((p:init_transactions(500))) -- the coordinator never answers
      local t0 = now_ms()
      p:close(CLOSE_MS)
      assert_bounded(t0, CLOSE_MS, "transactional producer")
      assert_back(before, "transactional producer")
    end)

    for _, kind in ipairs({ "assigned", "classic", "consumer" }) do
      it("a " .. kind .. " consumer with enable.auto.commit (" .. where .. ")", function()
        local before = resources()
        local extra = { ["group.id"] = "close-bounded", ["enable.auto.commit"] = "true",
          ["auto.commit.interval.ms"] = "100" }
        if kind ~= "assigned" then extra["group.protocol"] = kind end
        local c = assert(kafka.consumer(conf(where, extra)))
        if kind == "assigned" then
          assert(c:assign({ { topic = "t", partition = 0 }, { topic = "t", partition = 1 } }))
        else
          local revoked = 0
          assert(c:subscribe({ "t" }, { on_revoked = function() revoked = revoked + 1 end }))
        end
        for _ = 1, 4 do c:poll(200) end
        local t0 = now_ms()
        c:close(CLOSE_MS)
        assert_bounded(t0, CLOSE_MS, kind .. " consumer")
        assert_back(before, kind .. " consumer")
      end)
    end

    it("an admin client with operations timed out (" .. where .. ")", function()
      local before = resources()
      local a = assert(kafka.admin(conf(where)))
      assert.is_nil((a:describe_cluster({ timeout_ms = 500 })))
      assert.is_nil((a:create_topics({ { name = "close-bounded", partitions = 1 } }, { timeout_ms = 500 })))
      local t0 = now_ms()
      a:close()
      assert_bounded(t0, 0, "admin")
      assert_back(before, "admin")
    end)
  end
end)
