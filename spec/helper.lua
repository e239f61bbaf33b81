-- spec/helper.lua: what the busted specs share: where the built module
-- is (KN_LUA_CPATH, else build/lua/<this interpreter's ABI>/?.so), the
-- broker to talk to (KAFKA_BOOTSTRAP: a spec fails, never skips, without
-- it), how many brokers it has, unique topic names and record
-- timestamps the broker's retention keeps; and what the specs against
-- the secured listeners share (the gate, the v1..vn round trip) and a
-- bounded wait for what the broker applies a moment later.
local helper = {}

local abi = (type(jit) == "table") and "jit" or _VERSION:match("%d+%.%d+")
helper.cpath = os.getenv("KN_LUA_CPATH") or ("build/lua/" .. abi .. "/?.so")
package.cpath = helper.cpath .. ";" .. package.cpath

function helper.bootstrap()
  local b = os.getenv("KAFKA_BOOTSTRAP")
  assert(b and b ~= "", "KAFKA_BOOTSTRAP is not set: start a broker with tools/kafka/broker start")
  return b
end

-- Brokers in the test cluster: the harness starts one unless told
-- otherwise (tools/test --nodes 3 with KN_TEST_BROKERS=3).
helper.brokers = tonumber(os.getenv("KN_TEST_BROKERS") or "1")

-- A topic name unique to this run and call.
local counter = 0
local run_id = string.format("%x%04x", os.time() % 0x100000, math.floor(os.clock() * 1e6) % 0x10000)
function helper.topic(tag)
  counter = counter + 1
  return string.format("kn-spec-%s-%s-%d", tag, run_id, counter)
end

-- A base for record timestamps a spec sets itself (base + i): the
-- current time in ms. Never a small constant such as 1000: a broker
-- deletes a segment whose newest record is older than retention.ms (7
-- days by default) at its next retention check (every 5 minutes, from
-- 30 s after it started), active segment included. Records stamped
-- in 1970 vanish at that check, the log start moves to the log end, and
-- a consumer reading from "earliest" finds nothing (batch_view_spec's
-- rare "no records within 30 s", issue #3 follow-up).
function helper.timestamp_base()
  return os.time() * 1000
end

-- A temporary file holding text; returns its path.
function helper.write_temp(text)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

-- Gate for a spec that needs the secured listeners (call it inside the
-- describe): true when have; else it registers a failing test naming
-- what (KN_TEST_REQUIRE_SECURE=1: a missing listener is a failure) or a
-- pending one, and returns false (the describe then returns).
-- (it, pending and assert are the spec file's, not globals: a module
-- reaches them through busted's and luassert's modules.)
-- A spec on the SASL listeners first makes sure the harness's SCRAM user
-- is there (tools/kafka/broker ensure-scram, once per process): in long
-- suites the 4.3 broker has been seen to lose it, which would fail every
-- SCRAM case with a misleading authentication error.
local scram_checked = false
local function ensure_scram(what)
  local dir = os.getenv("KN_BROKER_DIR")
  if scram_checked or not dir or dir == "" or not what:find("SASL", 1, true) then return end
  scram_checked = true
  os.execute(string.format("tools/kafka/broker ensure-scram --dir '%s' >&2", dir))
end

function helper.need_secure(have, what, pending_what)
  if have then
    ensure_scram(what)
    return true
  end
  local busted = require("busted")
  if os.getenv("KN_TEST_REQUIRE_SECURE") == "1" then
    busted.it("needs the secured listeners", function()
      error(what .. " not set (tools/kafka/broker env)")
    end)
  else
    busted.pending(pending_what .. " not set (tools/kafka/broker env)")
  end
  return false
end

-- Creates a topic (one partition unless told) with admin and waits until it is known.
function helper.create_topic(admin, topic, partitions)
  local assert = require("luassert")
  local res = assert(admin:create_topics({ { name = topic, partitions = partitions or 1 } }, { timeout_ms = 30000 }))
  assert.is_nil(res[topic].error, res[topic].message)
  assert(admin:wait_for_topics({ topic }, 30000))
end

-- A producer from conf (options: the producer's options, without
-- on_delivery) sends "v1".."vn" to partition 0 of topic, flushes, sees
-- every delivery succeed, and closes.
function helper.produce_values(conf, options, topic, n)
  local assert = require("luassert")
  local kafka = require("kafka_native")
  local reports = {}
  local opts = { on_delivery = function(r) reports[#reports + 1] = r end }
  for k, v in pairs(options or {}) do opts[k] = v end
  local producer = assert(kafka.producer(conf, opts))
  for i = 1, n do assert(producer:send(topic, "v" .. i, { partition = 0 })) end
  assert(producer:flush(30000))
  assert.are.equal(n, #reports)
  for _, r in ipairs(reports) do assert.is_nil(r.error, r.message) end
  producer:close()
end

-- The values consumer polls (500 ms at a time) until it has n or 60 s
-- have passed.
function helper.poll_values(consumer, n)
  local assert = require("luassert")
  local got = {}
  local deadline = os.time() + 60
  while #got < n and os.time() < deadline do
    for _, r in ipairs(assert(consumer:poll(500))) do got[#got + 1] = r.value end
  end
  return got
end

-- Calls fetch until check(its result) holds or 30 s have passed (what
-- an alter changes shows in the metadata log a moment later); asserts
-- the check and returns the last result.
function helper.wait_for(fetch, check)
  local assert = require("luassert")
  local deadline, got = os.time() + 30, nil
  repeat
    got = fetch()
  until check(got) or os.time() > deadline
  assert.is_true(check(got))
  return got
end

-- The ABI this interpreter speaks ("5.4", "5.1", "jit").
helper.abi = abi

return helper
