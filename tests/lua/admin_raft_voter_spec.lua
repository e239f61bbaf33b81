-- tests/lua/admin_raft_voter_spec.lua: a KRaft voter really added and
-- removed (KIP-853) through the Lua admin, as tests/c/it_admin_raft_voter.c
-- does in C. The shared test cluster's quorum is static (kraft.version 0),
-- so this spec starts its own one-node cluster with a dynamic quorum
-- (KN_BROKER_DYNAMIC_QUORUM=1 tools/kafka/broker start, in
-- "$KN_BROKER_DIR-voters-lua") and one controller-only node
-- (tools/kafka/broker add-controller: an observer), and stops both at the
-- end. The controller is seen as an observer, added with add_raft_voter
-- (retried while the leader answers REQUEST_TIMED_OUT: it has not caught
-- up), seen as a voter in describe_metadata_quorum, refused as
-- DUPLICATE_VOTER when added again, removed with remove_raft_voter, seen
-- as an observer again and refused as VOTER_NOT_FOUND when removed again.
--
-- Not under spec/: two JVM starts cost more than a minute, so it is its
-- own ctest (lua_raft_voter, one interpreter), run where
-- it_admin_raft_voter runs (tools/test: the normal build only).
local helper = require("spec.helper")
local kafka = require("kafka_native")

-- The harness scripts run without the sanitizer runtimes the ASan
-- build preloads into this interpreter (LeakSanitizer fails bash itself).
local NO_PRELOAD = "env -u LD_PRELOAD "

local function sh(cmd)
  local ok = os.execute(NO_PRELOAD .. cmd)
  return ok == true or ok == 0
end

local function ids(replicas)
  local out = {}
  for _, r in ipairs(replicas) do out[#out + 1] = r.replica_id end
  table.sort(out)
  return table.concat(out, ",")
end

local function has(replicas, id)
  for _, r in ipairs(replicas) do
    if r.replica_id == id then return true end
  end
  return false
end

-- Polls describe_metadata_quorum (60 s at most, the controller catching
-- up on a loaded machine) until check(quorum) holds; returns the quorum.
local function wait_quorum(admin, what, check)
  local deadline, q, msg = os.time() + 60, nil, nil
  repeat
    q, msg = admin:describe_metadata_quorum({ timeout_ms = 30000 })
    if q and check(q) then return q end
    os.execute("sleep 0.3")
  until os.time() > deadline
  error(string.format("the quorum never showed %s: %s", what,
    q and ("voters=" .. ids(q.voters) .. " observers=" .. ids(q.observers)) or tostring(msg)))
end

describe("kafka_native.admin raft voters (dynamic quorum)", function()
  local dir, broker, admin
  local ctl = {}

  setup(function()
    helper.bootstrap() -- fails, never skips, without the test harness
    local base = os.getenv("KN_BROKER_DIR")
    dir = (base and base ~= "" and base or ("/tmp/kafka-native-" .. helper.topic("voters"))) .. "-voters-lua"
    broker = "tools/kafka/broker"
    assert(sh("KN_BROKER_DYNAMIC_QUORUM=1 " .. broker .. " start --dir '" .. dir .. "' >&2"),
      "could not start the dynamic-quorum cluster in " .. dir)
    local f = assert(io.open(dir .. "/bootstrap"))
    local bootstrap = f:read("*l")
    f:close()
    local p = assert(io.popen(NO_PRELOAD .. broker .. " add-controller --dir '" .. dir .. "'"))
    for line in p:lines() do
      local k, v = line:match("^KN_CONTROLLER_([A-Z_]+)=(.*)$")
      if k then ctl[k] = v end
    end
    p:close()
    assert(ctl.ID and ctl.DIRECTORY_ID and ctl.HOST and ctl.PORT, "add-controller printed no controller")
    ctl.ID, ctl.PORT = tonumber(ctl.ID), tonumber(ctl.PORT)
    admin = assert(kafka.admin({ ["bootstrap.servers"] = bootstrap }))
  end)

  teardown(function()
    if admin then admin:close() end
    if dir then sh(broker .. " stop --dir '" .. dir .. "' >&2") end
  end)

  it("adds a controller as a voter and removes it", function()
    -- Formatted without initial controllers: an observer first.
    local q = wait_quorum(admin, "the controller as an observer", function(q)
      return ids(q.voters) == "1" and has(q.observers, ctl.ID)
    end)
    assert.are.equal(1, q.leader_id)

    local endpoints = { { name = "CONTROLLER", host = ctl.HOST, port = ctl.PORT } }
    local deadline, ok, msg, code = os.time() + 60, nil, nil, nil
    repeat
      ok, msg, code = admin:add_raft_voter(ctl.ID, ctl.DIRECTORY_ID, endpoints, { timeout_ms = 30000 })
      if ok or code ~= "REQUEST_TIMED_OUT" then break end
      os.execute("sleep 0.5")
    until os.time() > deadline
    assert.is_true(ok, msg)
    q = wait_quorum(admin, "the controller as a voter", function(q)
      return ids(q.voters) == "1," .. ctl.ID and not has(q.observers, ctl.ID)
    end)
    assert.are.equal(2, #q.voters)

    ok, msg, code = admin:add_raft_voter(ctl.ID, ctl.DIRECTORY_ID, endpoints, { timeout_ms = 30000 })
    assert.is_nil(ok)
    assert.are.equal("DUPLICATE_VOTER", code, msg)

    assert.is_true(assert(admin:remove_raft_voter(ctl.ID, ctl.DIRECTORY_ID, { timeout_ms = 30000 })))
    -- Removed, it keeps fetching: an observer again.
    wait_quorum(admin, "the controller as an observer again", function(q)
      return ids(q.voters) == "1" and has(q.observers, ctl.ID)
    end)
    ok, msg, code = admin:remove_raft_voter(ctl.ID, ctl.DIRECTORY_ID, { timeout_ms = 30000 })
    assert.is_nil(ok)
    assert.are.equal("VOTER_NOT_FOUND", code, msg)
  end)
end)
